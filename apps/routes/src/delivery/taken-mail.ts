import type { RoutedMailData } from '@envoi/contracts-routes';
import {
  InboundMessageRejected,
  type ParsedInboundMessage,
  parseInboundMessage,
} from '@envoi/shared-inbound-mail';

/** The message parsed within the inbound-mail bounds, or why the library refuses it. */
export type ParsedMail = { message: ParsedInboundMessage } | { refused: InboundMessageRejected };

export async function parsedMail(raw: Buffer): Promise<ParsedMail> {
  try {
    return { message: await parseInboundMessage(raw) };
  } catch (error) {
    if (error instanceof InboundMessageRejected) return { refused: error };
    throw error;
  }
}

/** A routed message, its bytes (from its event or its spool) and its parse. */
export interface TakenMail {
  mail: RoutedMailData;
  raw: Buffer;
  parsed: ParsedMail;
}
