import type { SMTPServer } from 'smtp-server';

/** One client connection of smtp-server. */
export type SmtpConnection = SMTPServer['connections'] extends Set<infer C> ? C : never;

export interface OutgoingReply {
  code: number;
  data: string | string[] | null | undefined;
  /** smtp-server's context for its enhanced status code; false: none added. */
  context: string | false | undefined;
}

export interface AdaptedReply extends OutgoingReply {
  /** Close the connection once the reply is written. */
  close: boolean;
}

/** A reply text that already starts with an enhanced status code (`5.7.1 …`). */
const OWN_ENHANCED_CODE = /^[245]\.\d{1,3}\.\d{1,3} /;

/**
 * The replies smtp-server words on its own that the submission service answers otherwise
 * (reliability plan 31-40), and the texts of our handlers that carry their own enhanced codes.
 */
export function adaptReply(reply: OutgoingReply, secure: boolean): AdaptedReply {
  const { code, data, context } = reply;
  if (typeof data === 'string' && OWN_ENHANCED_CODE.test(data)) {
    return { code, data, context: false, close: code === 421 || code === 521 };
  }
  if (code === 250 && Array.isArray(data) && !secure) {
    // AUTH is offered only once the session is encrypted.
    return { ...reply, data: data.filter((line) => !line.startsWith('AUTH ')), close: false };
  }
  if (code === 538) {
    return {
      code,
      data: '5.7.11 Must issue a STARTTLS command first',
      context: false,
      close: false,
    };
  }
  if (code === 500 && context === 'BDAT') {
    return {
      code: 502,
      data: '5.5.1 BDAT is not supported (no CHUNKING)',
      context: false,
      close: false,
    };
  }
  if (code === 421 && data === 'Error: Command line too long') {
    return { code: 500, data: '5.5.2 Line too long', context: false, close: true };
  }
  return { ...reply, close: code === 421 || code === 521 };
}

/** Routes every reply of the connection through adaptReply. */
export function adaptConnectionReplies(connection: SmtpConnection): void {
  const send = connection.send.bind(connection);
  connection.send = (code, data, context) => {
    const adapted = adaptReply({ code, data, context }, connection.secure);
    send(adapted.code, adapted.data, adapted.context);
    // A 421 closes by itself in smtp-server.
    if (adapted.close && adapted.code !== 421) connection.close();
  };
}
