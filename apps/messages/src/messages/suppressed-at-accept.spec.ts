import { OUTBOX_BATCH_KEY } from '@envoi/shared-outbox';
import { WebhookPayloadValidator } from '@envoi/shared-testing';

import { suppressedAtAcceptEntries } from './suppressed-at-accept';

const webhookPayloads = new WebhookPayloadValidator();

const send = {
  accountId: '4cdd7bdd-294e-4762-892f-83d40abf5a87',
  domain: 'sender.test',
  from: 'hello@sender.test',
  subject: 'Hi {{ name }}',
  now: new Date('2030-01-02T03:04:05.678Z'),
};

describe('suppressedAtAcceptEntries', () => {
  it('writes nothing when no recipient is suppressed', () => {
    expect(suppressedAtAcceptEntries({ ...send, recipients: [] })).toEqual([]);
  });

  it('batches one message.suppressed per suppressed recipient, each a webhooks.yaml payload', () => {
    const entries = suppressedAtAcceptEntries({
      ...send,
      recipients: ['Gone@Recipient.test', 'gone@recipient.test'],
    });

    expect(entries).toHaveLength(1);
    expect(entries[0]?.subject.name).toBe('events.message.suppressed_at_accept.v1');
    const payload = entries[0]?.payload as Record<
      string,
      Array<{ id: string; data: { id: string } }>
    >;
    const events = payload[OUTBOX_BATCH_KEY] ?? [];
    expect(events.map((event) => event.data)).toEqual([
      expect.objectContaining({ recipient: 'Gone@Recipient.test' }),
      expect.objectContaining({ recipient: 'gone@recipient.test' }),
    ]);
    for (const event of events) {
      expect(event).toEqual({
        id: expect.any(String) as unknown,
        type: 'message.suppressed',
        timestamp: '2030-01-02T03:04:05.678Z',
        data: {
          account_id: send.accountId,
          event: 'on_suppressed',
          from: 'hello@sender.test',
          recipient: expect.any(String) as unknown,
          subject: 'Hi {{ name }}',
          message_id_header: `<${event.data.id}@sender.test>`,
          id: expect.stringMatching(/^[0-9a-f]{8}-[0-9a-f]{4}-7/) as unknown,
          is_bot: false,
        },
      });
      expect(webhookPayloads.eventViolations(event as never)).toEqual([]);
    }
    expect(new Set(events.map((event) => event.data.id)).size).toBe(2);
    expect(new Set(events.map((event) => event.id)).size).toBe(2);
  });
});
