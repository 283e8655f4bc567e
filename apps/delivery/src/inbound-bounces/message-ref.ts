import { messageIdOfBounceAddress } from '../smtp/verp';

const UUID_MESSAGE_ID =
  /^<?([0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12})@[^<>\s]+>?$/i;

/**
 * The message a complaint is about, by what the report kept of the original: its Return-Path
 * (our VERP address) or its Message-ID (`<uuid@domain>`, as the platform sets it). Null when
 * neither names one of our messages.
 */
export function messageUuidOfOriginal(
  returnPath: string | null,
  messageIdHeader: string | null,
): string | null {
  const byReturnPath = returnPath ? messageIdOfBounceAddress(returnPath) : null;
  if (byReturnPath) return byReturnPath;
  return UUID_MESSAGE_ID.exec(messageIdHeader?.trim() ?? '')?.[1]?.toLowerCase() ?? null;
}
