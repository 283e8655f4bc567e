import { CommonErrorCode } from '@envoi/contracts-core';
import {
  type SuppressionSnapshotResult,
  SuppressionsSubjects,
} from '@envoi/contracts-suppressions';
import { type RpcClient, RpcError } from '@envoi/shared-nats';
import { Logger } from '@nestjs/common';
import type { NatsConnection } from 'nats';

import type { MessagesConfig } from '../messages.config';
import { SuppressionSnapshots } from './suppression-snapshots.service';

const ACCOUNT = '3f0b7f7e-8a43-4c3e-9d2a-1b2c3d4e5f60';
const LATER = new Date(Date.now() + 86_400_000).toISOString();

/** The service over a bus answering `answer` to every snapshot request. */
function snapshots(answer: () => Promise<SuppressionSnapshotResult>, ttlMs = 60_000) {
  const request = jest.fn((_subject: unknown, _payload: unknown) => answer());
  const service = new SuppressionSnapshots(
    { request } as unknown as RpcClient,
    {
      SUPPRESSION_CACHE_TTL_MS: ttlMs,
      SUPPRESSION_CACHE_MAX_PER_ACCOUNT: 200,
    } as MessagesConfig,
    {} as NatsConnection,
  );
  return { service, request };
}

describe('SuppressionSnapshots', () => {
  it("reads the account's suppressions once within the TTL and answers checks from them", async () => {
    const { service, request } = snapshots(() =>
      Promise.resolve({
        suppressions: [
          { email: 'gone@example.test', domain: null, reason: 'bounced', expires_at: LATER },
        ],
      }),
    );

    const first = await service.of(ACCOUNT);
    const second = await service.of(ACCOUNT);

    expect(
      first?.reasons('a.test', ['Gone@Example.test', 'here@example.test'], Date.now()),
    ).toEqual(new Map([['gone@example.test', 'bounced']]));
    expect(second).toBe(first);
    expect(request).toHaveBeenCalledTimes(1);
    expect(request).toHaveBeenCalledWith(SuppressionsSubjects.snapshot, {
      account_id: ACCOUNT,
      max: 200,
    });
  });

  it('answers null for an account with too many suppressions, and keeps that answer', async () => {
    const { service, request } = snapshots(() => Promise.resolve({ suppressions: null }));

    await expect(service.of(ACCOUNT)).resolves.toBeNull();
    await expect(service.of(ACCOUNT)).resolves.toBeNull();
    expect(request).toHaveBeenCalledTimes(1);
  });

  it('answers null without asking when snapshots are off (TTL 0)', async () => {
    const { service, request } = snapshots(() => Promise.resolve({ suppressions: [] }), 0);

    await expect(service.of(ACCOUNT)).resolves.toBeNull();
    expect(request).not.toHaveBeenCalled();
  });

  it('answers null, for the TTL, when the suppressions service does not answer', async () => {
    const warn = jest.spyOn(Logger.prototype, 'warn').mockImplementation(() => undefined);
    const { service, request } = snapshots(() =>
      Promise.reject(new RpcError(CommonErrorCode.Unavailable, 'no responders')),
    );

    await expect(service.of(ACCOUNT)).resolves.toBeNull();
    await expect(service.of(ACCOUNT)).resolves.toBeNull();
    expect(request).toHaveBeenCalledTimes(1);
    expect(warn).toHaveBeenCalledTimes(1);
    warn.mockRestore();
  });

  it('lets any other failure through, keeping nothing', async () => {
    const { service, request } = snapshots(() => Promise.reject(new Error('bug')));

    await expect(service.of(ACCOUNT)).rejects.toThrow('bug');
    await expect(service.of(ACCOUNT)).rejects.toThrow('bug');
    expect(request).toHaveBeenCalledTimes(2);
  });
});
