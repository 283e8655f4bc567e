import {
  type DeliveryViewsV2,
  INLINE_PAYLOAD_MAX_BYTES,
  type SendSourcesRecord,
  type StoredObjectRecord,
} from '@envoi/contracts-messages';
import { fromSourcesRecord, type SendSources } from '@envoi/shared-composition';

import { toDeliveryView } from './delivery-view.service';
import { type DeliveryReplyReads, deliveryViewsReply } from './delivery-views-reply';
import type { MessageEntity } from './message.entity';

let counter = 0;

function message(sendId: string | null, overrides: Partial<MessageEntity> = {}): MessageEntity {
  counter++;
  const id = `0190f5c2-6c1e-7a3b-8c4d-${String(counter).padStart(12, '0')}`;
  return {
    id,
    sendId,
    messageIdHeader: `<${id}@sender.test>`,
    accountId: 'account',
    domainId: 'domain',
    domain: 'sender.test',
    sender: 'app@sender.test',
    subject: 'Hi',
    recipient: `r${counter}@r.test`,
    recipientName: counter % 2 ? 'Named' : null,
    substitutions: { n: counter },
    envelopeRecipients: [`r${counter}@r.test`],
    status: 'Queued',
    sandbox: false,
    sandboxResult: null,
    firstAttemptAt: null,
    expiresAt: null,
    trackOpens: true,
    trackClicks: false,
    contentPurgedAt: null,
    ...overrides,
  } as Partial<MessageEntity> as MessageEntity;
}

function sources(attachmentBytes = 10): SendSources {
  return {
    kind: 'message',
    acceptedAt: new Date('2026-03-04T05:06:07.089Z'),
    from: { email: 'app@sender.test' },
    templates: { subject: 'Hi {{ n }}', html: '<p>{{ n }}</p>' },
    headers: {},
    substitutions: { n: 0 },
    templated: true,
    attachments: [
      {
        data: Buffer.alloc(attachmentBytes, 7).toString('base64'),
        base64: true,
        content_type: 'application/octet-stream',
        file_name: 'a.bin',
      },
    ],
  };
}

/** Reads from maps, counting each kind of read. */
function reads(
  sends: Record<string, SendSources | Buffer | undefined>,
  raws: Record<string, Buffer | null> = {},
) {
  const calls = { sources: [] as string[], raw: [] as string[], uploads: [] as string[] };
  const uploaded = new Map<string, Buffer>();
  const read: DeliveryReplyReads = {
    content: (sendId) => {
      calls.sources.push(sendId);
      return Promise.resolve(sends[sendId]);
    },
    raw: (messageId) => {
      calls.raw.push(messageId);
      return Promise.resolve(raws[messageId] ?? null);
    },
    upload: (sendId, bytes) => {
      calls.uploads.push(sendId);
      const name = `${sendId}.sources.${calls.uploads.length}`;
      uploaded.set(name, bytes);
      const ref: StoredObjectRecord = { bucket: 'b', name, size: bytes.length, sha256: 'x' };
      return Promise.resolve(ref);
    },
  };
  return { read, calls, uploaded };
}

function reply(messages: MessageEntity[], read: DeliveryReplyReads): Promise<DeliveryViewsV2> {
  return deliveryViewsReply(messages, messages.map(toDeliveryView), read);
}

describe('deliveryViewsReply', () => {
  it('carries each send’s sources once, and each message’s recipient part', async () => {
    const first = [message('send-a'), message('send-a'), message('send-a')];
    const other = message('send-b');
    const { read, calls } = reads({ 'send-a': sources(), 'send-b': sources(20) });

    const result = await reply([...first, other], read);

    expect(calls.sources).toEqual(['send-a', 'send-b']);
    expect(result.sends.map((send) => send.id)).toEqual(['send-a', 'send-b']);
    expect(fromSourcesRecord(result.sends[0]?.sources ?? ({} as never))).toEqual(sources());
    expect(result.separately).toEqual([]);
    expect(result.views.map((view) => view.composition?.send_id)).toEqual([
      'send-a',
      'send-a',
      'send-a',
      'send-b',
    ]);
    expect(result.views[0]).toEqual({
      ...toDeliveryView(first[0]),
      composition: {
        send_id: 'send-a',
        recipient: { email: first[0]?.recipient, name: 'Named' },
        substitutions: first[0]?.substitutions,
      },
    });
    expect(result.views.every((view) => view.content_base64 === undefined)).toBe(true);
  });

  it('sends sources too large for the reply through the bucket, once per send', async () => {
    const messages = [message('big'), message('big'), message('small')];
    const large = sources(INLINE_PAYLOAD_MAX_BYTES);
    const { read, calls, uploaded } = reads({ big: large, small: sources() });

    const result = await reply(messages, read);

    expect(calls.uploads).toEqual(['big']);
    const [big, small] = result.sends;
    expect(big?.sources).toBeUndefined();
    const stored = uploaded.get(big?.sources_download?.name ?? '');
    const record = JSON.parse(stored?.toString('utf8') ?? '{}') as SendSourcesRecord;
    expect(fromSourcesRecord(record)).toEqual(large);
    expect(small?.sources).toBeDefined();
    expect(result.views.map((view) => view.composition?.send_id)).toEqual(['big', 'big', 'small']);
    expect(Buffer.byteLength(JSON.stringify(result))).toBeLessThanOrEqual(INLINE_PAYLOAD_MAX_BYTES);
  });

  it('carries a legacy message’s raw bytes while they fit, the rest by id; purged ones bare', async () => {
    const legacy = message(null);
    const largeLegacy = message(null);
    const purgedSend = message('gone');
    const purgedMessage = message('send-a', { contentPurgedAt: new Date() });
    const { read, calls } = reads(
      { 'send-a': sources(), gone: undefined },
      {
        [legacy.id]: Buffer.from('Subject: hi\r\n\r\nhello\r\n'),
        [largeLegacy.id]: Buffer.alloc(INLINE_PAYLOAD_MAX_BYTES),
      },
    );

    const result = await reply([legacy, largeLegacy, purgedSend, purgedMessage], read);

    expect(result.views.map((view) => view.id)).toEqual([
      legacy.id,
      purgedSend.id,
      purgedMessage.id,
    ]);
    expect(Buffer.from(result.views[0]?.content_base64 ?? '', 'base64').toString()).toBe(
      'Subject: hi\r\n\r\nhello\r\n',
    );
    expect(result.views[1]).toEqual(toDeliveryView(purgedSend));
    expect(result.views[2]).toEqual(toDeliveryView(purgedMessage));
    expect(result.separately).toEqual([largeLegacy.id]);
    expect(result.sends).toEqual([]);
    // A purged message's send is not read for it.
    expect(calls.sources).toEqual(['gone']);
  });

  it('carries a submitted send’s raw bytes in each of its messages, reading the send once', async () => {
    const raw = Buffer.from('From: app@sender.test\r\nSubject: hi\r\n\r\n\xe9 8-bit\r\n', 'latin1');
    const messages = [message('smtp'), message('smtp'), message('too-big')];
    const { read, calls } = reads({ smtp: raw, 'too-big': Buffer.alloc(INLINE_PAYLOAD_MAX_BYTES) });

    const result = await reply(messages, read);

    expect(calls.sources).toEqual(['smtp', 'too-big']);
    expect(result.sends).toEqual([]);
    expect(result.views.map((view) => view.id)).toEqual([messages[0]?.id, messages[1]?.id]);
    for (const view of result.views) {
      expect(view.composition).toBeUndefined();
      expect(Buffer.from(view.content_base64 ?? '', 'base64')).toEqual(raw);
    }
    expect(result.separately).toEqual([messages[2]?.id]);
  });
});
