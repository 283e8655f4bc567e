import { SmtpReply } from '../submission/replies';

/**
 * The MX's own refusals (the ones it shares with submission are `Replies`); the texts carry
 * their enhanced codes.
 */
export const MxReplies = {
  relayingDenied: () => new SmtpReply(550, '5.7.1', 'Relaying denied'),
  unknownRecipient: () => new SmtpReply(550, '5.1.1', 'Recipient address rejected: unknown user'),
  lineTooLong: (max: number) =>
    new SmtpReply(554, '5.6.0', `Message has a line longer than ${max} octets`),
} as const;

export function acceptedAs(inboundId: string): string {
  return `2.0.0 Ok: queued as ${inboundId}`;
}
