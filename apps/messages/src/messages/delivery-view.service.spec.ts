import { INLINE_PAYLOAD_MAX_BYTES } from '@envoi/contracts-messages';

import { fitsInline, toDeliveryView } from './delivery-view.service';
import { base64Length } from './delivery-views-reply';
import type { MessageEntity } from './message.entity';

describe('delivery view', () => {
  it('inlines content while its base64 form fits the reply limit', () => {
    const largestInline = (INLINE_PAYLOAD_MAX_BYTES / 4) * 3;

    expect(base64Length(largestInline)).toBe(INLINE_PAYLOAD_MAX_BYTES);
    expect(Buffer.alloc(largestInline).toString('base64')).toHaveLength(INLINE_PAYLOAD_MAX_BYTES);
    expect(fitsInline(largestInline)).toBe(true);
    expect(fitsInline(largestInline + 1)).toBe(false);
    expect(fitsInline(0)).toBe(true);
  });

  it('shows the envelope, state, schedule and effective tracking of a message', () => {
    const message = {
      id: '0190f5c2-6c1e-7a3b-8c4d-1234567890ab',
      messageIdHeader: '<0190f5c2-6c1e-7a3b-8c4d-1234567890ab@sender.test>',
      accountId: '5f0c6f7e-1d2b-4c3a-9e8f-0a1b2c3d4e5f',
      domainId: '6f0c6f7e-1d2b-4c3a-9e8f-0a1b2c3d4e5f',
      domain: 'sender.test',
      sender: 'Hello@sender.test',
      subject: 'Hi',
      envelopeRecipients: ['a@r.test', 'b@r.test'],
      status: 'Scheduled',
      sandbox: true,
      sandboxResult: 'bounce',
      firstAttemptAt: new Date('2030-01-01T00:00:00Z'),
      expiresAt: null,
      trackOpens: true,
      trackClicks: false,
    } as Partial<MessageEntity> as MessageEntity;

    expect(toDeliveryView(message)).toEqual({
      id: message.id,
      message_id_header: message.messageIdHeader,
      account_id: message.accountId,
      domain_id: message.domainId,
      domain: 'sender.test',
      sender: 'Hello@sender.test',
      subject: 'Hi',
      envelope_recipients: ['a@r.test', 'b@r.test'],
      status: 'Scheduled',
      sandbox: true,
      sandbox_result: 'bounce',
      first_attempt_at: '2030-01-01T00:00:00.000Z',
      expires_at: null,
      tracking: { open: true, click: false },
    });
  });
});
