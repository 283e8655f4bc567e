/**
 * A refusal a session handler gives smtp-server: the reply code, and a text that starts with its
 * enhanced status code (RFC 3463), which the reply adapter sends as it is.
 */
export class SmtpReply extends Error {
  constructor(
    readonly responseCode: number,
    readonly enhancedCode: string,
    text: string,
    /** Close the connection after this reply (a 421 always closes). */
    readonly closes = false,
  ) {
    super(`${enhancedCode} ${text}`);
    this.name = 'SmtpReply';
  }
}

export const Replies = {
  authInvalid: () => new SmtpReply(535, '5.7.8', 'Authentication credentials invalid'),
  authThrottled: () => new SmtpReply(421, '4.7.0', 'Too many failed logins, try again later', true),
  accountDisabled: () => new SmtpReply(521, '5.7.1', 'Account disabled', true),
  tooManyConnectionsFromAddress: () =>
    new SmtpReply(421, '4.7.0', 'Too many connections from your address, try again later', true),
  tooManyConnections: () =>
    new SmtpReply(421, '4.7.0', 'Too many connections, try again later', true),
  tooManyTransactions: () =>
    new SmtpReply(421, '4.7.0', 'Too many messages on this connection, reconnect to go on', true),
  nullSenderRefused: () => new SmtpReply(550, '5.7.1', 'A null sender is not accepted here'),
  senderNotAllowed: (username: string, accountId: string) =>
    new SmtpReply(
      550,
      '5.7.1',
      `authz_id '${username}' is not authorized to send as tenant '${accountId}' or from this domain`,
    ),
  parameterNotRecognized: (name: string) =>
    new SmtpReply(501, '5.5.4', `Parameter not recognized: ${name}`),
  messageTooBig: (max: number) =>
    new SmtpReply(552, '5.3.4', `Message exceeds fixed maximum message size ${max}`),
  malformed: (detail: string) => new SmtpReply(552, '5.6.0', `Malformed message: ${detail}`),
  controlHeaderInvalid: (detail: string) => new SmtpReply(550, '5.6.0', detail),
  sendingRefused: (detail: string) => new SmtpReply(550, '5.7.1', detail),
  temporaryFailure: () =>
    new SmtpReply(451, '4.3.0', 'Temporary failure, nothing was stored: try again later'),
} as const;

/** Replies that need a value only known at the time. */
export const TemporaryReplies = {
  authUnavailable: () =>
    new SmtpReply(454, '4.7.0', 'Temporary authentication failure, try again later'),
  queuedAs: (messageIdHeader: string) => `2.0.0 Ok: queued as ${messageIdHeader}`,
} as const;
