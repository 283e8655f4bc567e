import type { SmtpConnection } from '../submission/reply-adapter';
import { MxReplies } from './mx-replies';

/** `RCPT TO:<@relay,…:user@host>` (a source route) or `RCPT TO:<"…"@host>` (a quoted local part). */
const ROUTED_OR_QUOTED_RECIPIENT = /^RCPT\s+TO\s*:\s*<\s*["@]/i;

export function isRoutedOrQuotedRecipient(commandLine: string): boolean {
  return ROUTED_OR_QUOTED_RECIPIENT.test(commandLine);
}

/**
 * smtp-server drops a source route (RFC 5321 says to ignore it) and refuses a quoted `@` as bad
 * syntax; the MX denies both as relaying before anything else looks at them (reliability plan 41).
 */
export function denyRoutedOrQuotedRecipients(connection: SmtpConnection): void {
  const handleRcpt = connection.handler_RCPT.bind(connection);
  connection.handler_RCPT = (command, callback) => {
    if (!isRoutedOrQuotedRecipient(command.toString('latin1')))
      return handleRcpt(command, callback);
    const denied = MxReplies.relayingDenied();
    connection.send(denied.responseCode, denied.message, false);
    callback();
  };
}
