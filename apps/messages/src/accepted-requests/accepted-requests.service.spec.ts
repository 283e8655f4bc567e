import {
  type AcceptSubmissionResult,
  type CreateMessageResult,
  MessagesErrorCode,
} from '@envoi/contracts-messages';
import type { EntityManager } from 'typeorm';

import type { MessagesConfig } from '../messages.config';
import type { AcceptedRequest, AcceptedRequestsRepository } from './accepted-requests.repository';
import { AcceptedRequests } from './accepted-requests.service';

const ACCOUNT_ID = '3f0b7f7e-8a43-4c3e-9d2a-1b2c3d4e5f60';
const FINGERPRINT = 'ab'.repeat(32);
const WINDOW_MS = 86_400_000;
const MANAGER = {} as EntityManager;

function reply(id: string): CreateMessageResult {
  return {
    object: 'list',
    data: [
      {
        object: 'message',
        id,
        recipient: { email: 'to@example.net', name: '' },
        status: 'queued',
        error: null,
      },
    ],
  };
}

const keyed = {
  account_id: ACCOUNT_ID,
  api: 'v2' as const,
  idempotency: { key: 'k1', fingerprint: FINGERPRINT },
};

function setup(found: Array<AcceptedRequest | null>, inserted = true) {
  const records = {
    findLive: jest.fn(() => Promise.resolve(found.shift() ?? null)),
    insert: jest.fn(() => Promise.resolve(inserted)),
    purgeExpired: jest.fn(() => Promise.resolve(3)),
  };
  const service = new AcceptedRequests(
    records as unknown as AcceptedRequestsRepository,
    { IDEMPOTENCY_TTL_MS: WINDOW_MS } as MessagesConfig,
  );
  return { service, records };
}

describe('AcceptedRequests.once', () => {
  it('only accepts a send without a key', async () => {
    const { service, records } = setup([]);
    const accept = jest.fn(() => Promise.resolve(reply('<new@x>')));
    await expect(service.once({ account_id: ACCOUNT_ID, api: 'v2' }, accept)).resolves.toEqual(
      reply('<new@x>'),
    );
    expect(records.findLive).not.toHaveBeenCalled();
  });

  it('accepts a key seen for the first time', async () => {
    const { service, records } = setup([null]);
    const accept = jest.fn(() => Promise.resolve(reply('<new@x>')));
    await expect(service.once(keyed, accept)).resolves.toEqual(reply('<new@x>'));
    expect(records.findLive).toHaveBeenCalledWith({ accountId: ACCOUNT_ID, key: 'k1' }, WINDOW_MS);
  });

  it('answers the committed reply without accepting again', async () => {
    const { service } = setup([{ fingerprint: FINGERPRINT, reply: reply('<old@x>') }]);
    const accept = jest.fn();
    await expect(service.once(keyed, accept)).resolves.toEqual(reply('<old@x>'));
    expect(accept).not.toHaveBeenCalled();
  });

  it('refuses the key committed with another request', async () => {
    const { service } = setup([{ fingerprint: 'cd'.repeat(32), reply: reply('<old@x>') }]);
    const accept = jest.fn();
    await expect(service.once(keyed, accept)).rejects.toMatchObject({
      code: MessagesErrorCode.IdempotencyKeyReused,
    });
    expect(accept).not.toHaveBeenCalled();
  });

  it("answers the winner's reply when a concurrent send committed the key first", async () => {
    const { service } = setup([null, { fingerprint: FINGERPRINT, reply: reply('<won@x>') }], false);
    const accept = async () => {
      await service.record(MANAGER, keyed, reply('<lost@x>'));
      return reply('<lost@x>');
    };
    await expect(service.once(keyed, accept)).resolves.toEqual(reply('<won@x>'));
  });

  it('lets any other failure through', async () => {
    const { service } = setup([null]);
    await expect(service.once(keyed, () => Promise.reject(new Error('boom')))).rejects.toThrow(
      'boom',
    );
  });
});

function submitted(header: string): AcceptSubmissionResult {
  return {
    message_id_header: header,
    messages: [{ recipient: 'to@example.net', id: header, status: 'queued', error: null }],
  };
}

describe('AcceptedRequests.onceSubmitted', () => {
  it('accepts without looking the key up first', async () => {
    const { service, records } = setup([]);
    await expect(
      service.onceSubmitted(keyed, () => Promise.resolve(submitted('<new@x>'))),
    ).resolves.toEqual(submitted('<new@x>'));
    expect(records.findLive).not.toHaveBeenCalled();
  });

  it('answers the committed reply when the key is found taken at commit', async () => {
    const { service } = setup([{ fingerprint: FINGERPRINT, reply: submitted('<old@x>') }], false);
    const accept = async () => {
      await service.record(MANAGER, keyed, submitted('<again@x>'));
      return submitted('<again@x>');
    };
    await expect(service.onceSubmitted(keyed, accept)).resolves.toEqual(submitted('<old@x>'));
  });

  it('answers the committed reply when a retry is refused by checks that changed since', async () => {
    const { service } = setup([{ fingerprint: FINGERPRINT, reply: submitted('<old@x>') }]);
    await expect(
      service.onceSubmitted(keyed, () => Promise.reject(new Error('account suspended'))),
    ).resolves.toEqual(submitted('<old@x>'));
  });

  it('lets a failure through when nothing was committed under the key', async () => {
    const { service } = setup([null]);
    await expect(
      service.onceSubmitted(keyed, () => Promise.reject(new Error('boom'))),
    ).rejects.toThrow('boom');
  });
});

describe('AcceptedRequests.record', () => {
  it('records the key, fingerprint and reply in the given transaction', async () => {
    const { service, records } = setup([]);
    await service.record(MANAGER, keyed, reply('<new@x>'));
    expect(records.insert).toHaveBeenCalledWith(
      MANAGER,
      { accountId: ACCOUNT_ID, key: 'k1' },
      { fingerprint: FINGERPRINT, reply: reply('<new@x>') },
      WINDOW_MS,
    );
  });

  it('records nothing for a send without a key', async () => {
    const { service, records } = setup([]);
    await service.record(MANAGER, { account_id: ACCOUNT_ID, api: 'v2' }, reply('<new@x>'));
    expect(records.insert).not.toHaveBeenCalled();
  });
});
