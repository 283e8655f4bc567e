import { type DeliveryView, MessagesSubjects } from '@envoi/contracts-messages';
import {
  HtmlTracker,
  recipientPartOfView,
  type SendSources,
  StoredComposer,
  toSourcesRecord,
  trackRawMime,
} from '@envoi/shared-composition';
import type { RpcClient } from '@envoi/shared-nats';
import type { NatsConnection } from 'nats';

import type { DeliveryConfig } from '../delivery.config';
import { hasContent, MessageViews, withSources } from './message-views';

const tracking = {
  TRACKING_BASE_URL: 'https://track.example.test',
  TRACKING_SECRET: 'a-tracking-secret-of-at-least-32-bytes!',
};

const sources: SendSources = {
  kind: 'message',
  acceptedAt: new Date('2026-03-04T05:06:07.089Z'),
  from: { email: 'app@sender.test' },
  templates: { subject: 'Hi {{ name }}', html: '<a href="https://example.com/">go</a></body>' },
  headers: {},
  templated: true,
  attachments: [],
};

const bare = {
  id: '0190a7e2-5c1e-7b3a-9f00-8d2c4e6a1b2c',
  message_id_header: '<0190a7e2-5c1e-7b3a-9f00-8d2c4e6a1b2c@sender.test>',
  envelope_recipients: ['ann@r.test'],
  tracking: { open: true, click: true },
} as DeliveryView;

const composed: DeliveryView = {
  ...bare,
  composition: {
    send_id: 'send-a',
    recipient: { email: 'ann@r.test' },
    substitutions: { name: 'Ann' },
  },
};

describe('message views', () => {
  it('gives each view of a send its sources, and leaves the others as they are', () => {
    const legacy = { ...bare, id: 'legacy', content_base64: 'aGk=' };
    const [withSend, other] = withSources([composed, legacy], new Map([['send-a', sources]]));

    expect(withSend).toEqual({ ...composed, sources });
    expect(other).toBe(legacy);
    expect(hasContent(withSend ?? bare)).toBe(true);
    expect(hasContent(legacy)).toBe(true);
    // The send was purged (the reply carries no sources for it), or the message's content was.
    expect(hasContent(withSources([composed], new Map())[0] ?? composed)).toBe(false);
    expect(hasContent(bare)).toBe(false);
  });

  it('composes a message of a send as the messages service does; a legacy one as carried', async () => {
    const views = new MessageViews(
      {} as RpcClient,
      {} as NatsConnection,
      tracking as DeliveryConfig,
    );
    const expected = await new StoredComposer(new HtmlTracker(tracking)).compose(
      sources,
      recipientPartOfView(composed, composed.composition ?? ({} as never)),
    );

    const raw = await views.raw({ ...composed, sources });

    expect(raw.equals(expected)).toBe(true);
    expect(raw.toString('latin1')).toContain('Subject: Hi Ann');
    expect((await views.raw({ ...bare, content_base64: 'aGk=' })).toString()).toBe('hi');
    await expect(views.raw(bare)).rejects.toThrow(/carries no content/);
  });

  it('adds tracking to a submitted message for its recipient; a legacy one goes as carried', async () => {
    const views = new MessageViews(
      {} as RpcClient,
      {} as NatsConnection,
      tracking as DeliveryConfig,
    );
    const submitted = Buffer.from(
      'From: app@sender.test\r\nContent-Type: text/html\r\n\r\n<a href="https://example.com/">go</a>\r\n',
    );
    const content_base64 = submitted.toString('base64');
    const choice = { opens: true, clicks: true };
    const expected = trackRawMime(submitted, new HtmlTracker(tracking), bare.id, choice).raw;

    const raw = await views.raw({ ...bare, submitted: true, content_base64 });

    expect(raw.equals(expected)).toBe(true);
    expect(raw.toString()).toContain('https://track.example.test/t/c/');
    expect(raw.toString()).toContain('https://track.example.test/t/o/');
    const untracked = { ...bare, tracking: { open: false, click: false } };
    expect(
      (await views.raw({ ...untracked, submitted: true, content_base64 })).equals(submitted),
    ).toBe(true);
    expect((await views.raw({ ...bare, content_base64 })).equals(submitted)).toBe(true);
  });

  it('reads a job’s one message as a chunk’s, alone only when the chunk’s reply leaves it out', async () => {
    const asked: string[] = [];
    const replies: Record<string, unknown[]> = {
      [MessagesSubjects.deliveryViewsV2.name]: [
        {
          views: [composed],
          sends: [{ id: 'send-a', sources: toSourcesRecord(sources) }],
          separately: [],
        },
        { views: [], sends: [], separately: ['large'] },
        { views: [], sends: [], separately: [] },
      ],
      [MessagesSubjects.deliveryView.name]: [{ ...bare, id: 'large', content_base64: 'aGk=' }],
    };
    const rpc = {
      request: (subject: { name: string }) => {
        asked.push(subject.name);
        return Promise.resolve(replies[subject.name]?.shift());
      },
    } as unknown as RpcClient;
    const views = new MessageViews(rpc, {} as NatsConnection, tracking as DeliveryConfig);

    expect(await views.one(composed.id)).toEqual({ ...composed, sources });
    expect((await views.one('large'))?.content_base64).toBe('aGk=');
    expect(await views.one('gone')).toBeNull();
    expect(asked).toEqual([
      MessagesSubjects.deliveryViewsV2.name,
      MessagesSubjects.deliveryViewsV2.name,
      MessagesSubjects.deliveryView.name,
      MessagesSubjects.deliveryViewsV2.name,
    ]);
  });

  it('reads the one messages of jobs asked for together in one call', async () => {
    const asked: Array<{ subject: string; ids: string[] }> = [];
    const rpc = {
      request: (subject: { name: string }, body: { message_ids?: string[] }) => {
        asked.push({ subject: subject.name, ids: body.message_ids ?? [] });
        return Promise.resolve({
          views: [composed],
          sends: [{ id: 'send-a', sources: toSourcesRecord(sources) }],
          separately: [],
        });
      },
    } as unknown as RpcClient;
    const views = new MessageViews(rpc, {} as NatsConnection, tracking as DeliveryConfig);

    const read = await Promise.all([
      views.one(composed.id),
      views.one('gone'),
      views.one(composed.id),
    ]);

    expect(read).toEqual([{ ...composed, sources }, null, { ...composed, sources }]);
    expect(asked).toEqual([
      { subject: MessagesSubjects.deliveryViewsV2.name, ids: [composed.id, 'gone'] },
    ]);
  });
});
