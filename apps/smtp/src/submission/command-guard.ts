import { SMTP_LOGIN_FIELD_MAX } from '@envoi/contracts-accounts';

import type { SmtpConnection } from './reply-adapter';

/** Longest command line, its CRLF included (RFC 5321 4.5.3.1.4). */
export const MAX_COMMAND_OCTETS = 512;
const CRLF_OCTETS = 2;
const MAX_UTF8_OCTETS_PER_CHAR = 4;

/**
 * Longest AUTH line (RFC 4954 allows it past 512): `AUTH PLAIN ` and the base64 of an authzid,
 * a username and a password each at the credential field limit, with their two NUL separators.
 */
export const MAX_AUTH_LINE_OCTETS =
  'AUTH PLAIN '.length +
  Math.ceil((3 * SMTP_LOGIN_FIELD_MAX * MAX_UTF8_OCTETS_PER_CHAR + 2) / 3) * 4;

/** Whether a line may be as long as an AUTH line: AUTH itself, or a reply to its challenge. */
function isAuthLine(connection: SmtpConnection, line: Buffer): boolean {
  if (connection._nextHandler !== false) return true;
  return /^AUTH /i.test(line.subarray(0, 5).toString('latin1'));
}

/**
 * Checks every command line before smtp-server handles it (reliability plan 37 and 38): a client
 * talking before the banner gets 554 5.5.1 and is dropped; a command line over 512 octets that is
 * not part of AUTH gets 500 5.5.2 and is dropped. smtp-server's own limit stays at the AUTH bound.
 */
export function guardCommands(connection: SmtpConnection): void {
  const handle = connection._onCommand.bind(connection);
  connection._onCommand = (line, callback) => {
    if (!connection._ready) {
      connection.send(554, '5.5.1 Protocol error: command sent before the greeting');
      connection.close();
      return;
    }
    if (line.length + CRLF_OCTETS > MAX_COMMAND_OCTETS && !isAuthLine(connection, line)) {
      connection.send(500, '5.5.2 Line too long');
      connection.close();
      return;
    }
    handle(line, callback);
  };
}
