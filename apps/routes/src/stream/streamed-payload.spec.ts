import type { MessageRoutingPayload } from '@envoi/contracts-routes';

import { streamEventId, withoutAttachmentBytes } from './streamed-payload';

describe('withoutAttachmentBytes', () => {
  const payload = {
    type: 'message.routing',
    route_id: 'r',
    timestamp: '2026-05-01T10:00:00.000000000Z',
    data: {
      id: 'm',
      subject: 'Hi',
      attachments: [
        {
          filename: 'a.txt',
          content_type: 'text/plain',
          content_id: '',
          disposition: 'attachment',
          data: Buffer.from('hello world').toString('base64'),
        },
      ],
    },
  } as unknown as MessageRoutingPayload;

  it('keeps every field and each attachment metadata, with its size instead of its bytes', () => {
    const streamed = withoutAttachmentBytes(payload);
    expect(streamed.data.attachments).toEqual([
      {
        filename: 'a.txt',
        content_type: 'text/plain',
        content_id: '',
        disposition: 'attachment',
        size: 11,
      },
    ]);
    expect(JSON.stringify(streamed)).not.toContain(Buffer.from('hello world').toString('base64'));
    expect(streamed.data).toMatchObject({ id: 'm', subject: 'Hi' });
    expect(streamed.route_id).toBe('r');
  });

  it('leaves a payload without attachments as it is', () => {
    const data = { ...payload.data };
    delete data.attachments;
    expect(withoutAttachmentBytes({ ...payload, data })).toEqual({ ...payload, data });
  });
});

describe('streamEventId', () => {
  it('is the same for the same call and differs for another route or recipients', () => {
    const id = streamEventId('i', 'r', ['a@x.test']);
    expect(id).toMatch(/^msg_[0-9a-f]{32}$/);
    expect(streamEventId('i', 'r', ['a@x.test'])).toBe(id);
    expect(streamEventId('i', 'r2', ['a@x.test'])).not.toBe(id);
    expect(streamEventId('i', 'r', ['b@x.test'])).not.toBe(id);
  });
});
