import type { DeliveryConfig } from '../delivery.config';
import { AttemptWrites } from './attempt-writes';
import type { AttemptsRepository, ClaimKey, OutcomeWrite } from './attempts.repository';

const STARTED = new Date('2026-01-01T00:00:00Z');

function key(messageId: string): ClaimKey {
  return { messageId, accountId: 'a', attempt: 1, startedAt: STARTED };
}

function outcome(claimId: string): OutcomeWrite {
  return {
    kind: 'claimed',
    claim: { id: claimId, token: 't' },
    record: {
      outcome: {} as never,
      finishedAt: STARTED,
      tls: true,
      nextAttemptAt: null,
      entries: [],
    },
  };
}

/**
 * claimAndRecord in memory: the claims and outcomes of each statement; `held` is never claimed,
 * and an outcome of claim `lost` is not written. `failing` makes a statement with more than one
 * item fail (as a statement that one item breaks would); each statement answers once `held`
 * resolves.
 */
function repository(failing = false, held: Promise<void> = Promise.resolve()) {
  const statements: Array<{ claims: string[]; outcomes: string[]; leaseUntil: Date }> = [];
  const attempts = {
    claimAndRecord: (
      keys: readonly ClaimKey[],
      leaseUntil: Date,
      writes: readonly OutcomeWrite[],
    ) => {
      const claims = keys.map((claimed) => claimed.messageId);
      const outcomes = writes.map((write) => (write.kind === 'claimed' ? write.claim.id : ''));
      statements.push({ claims, outcomes, leaseUntil });
      if (failing && claims.length + outcomes.length > 1) {
        return Promise.reject(new Error('statement failed'));
      }
      return held.then(() => ({
        claims: claims.map((id) => (id === 'held' ? null : { id: `claim-${id}`, token: 't' })),
        written: outcomes.map((id) => id !== 'lost'),
      }));
    },
  };
  return { attempts: attempts as unknown as AttemptsRepository, statements };
}

const CONFIG = { DELIVERY_CLAIM_TTL_MS: 30_000 } as DeliveryConfig;

describe('AttemptWrites', () => {
  it('writes the claims and outcomes asked for together in one statement, each answered', async () => {
    const { attempts, statements } = repository();
    const writes = new AttemptWrites(attempts, CONFIG);
    const before = Date.now();

    const answers = await Promise.all([
      writes.claim(key('m')),
      writes.record(outcome('done')),
      writes.claim(key('held')),
      writes.record(outcome('lost')),
      writes.claim(key('n')),
    ]);

    expect(statements.map(({ claims, outcomes }) => ({ claims, outcomes }))).toEqual([
      { claims: ['m', 'held', 'n'], outcomes: ['done', 'lost'] },
    ]);
    expect(answers).toEqual([
      { id: 'claim-m', token: 't' },
      true,
      null,
      false,
      { id: 'claim-n', token: 't' },
    ]);
    expect(statements[0]?.leaseUntil.getTime()).toBeGreaterThanOrEqual(before + 30_000);
  });

  it('puts what comes while a statement runs in the next one', async () => {
    let release: () => void = () => undefined;
    const held = new Promise<void>((resolve) => (release = resolve));
    const { attempts, statements } = repository(false, held);
    const writes = new AttemptWrites(attempts, CONFIG);

    const first = writes.claim(key('m'));
    for (let turn = 0; turn < 10 && statements.length === 0; turn++) {
      await new Promise((resolve) => setImmediate(resolve));
    }
    expect(statements).toHaveLength(1);
    const later = [writes.record(outcome('done')), writes.claim(key('n'))];
    for (let turn = 0; turn < 10; turn++) await new Promise((resolve) => setImmediate(resolve));
    // Still one statement: the first has not answered yet.
    expect(statements).toHaveLength(1);
    release();
    await Promise.all([first, ...later]);

    expect(statements.map(({ claims, outcomes }) => ({ claims, outcomes }))).toEqual([
      { claims: ['m'], outcomes: [] },
      { claims: ['n'], outcomes: ['done'] },
    ]);
  });

  it('writes each claim and outcome alone when their statement failed', async () => {
    const { attempts, statements } = repository(true);
    const writes = new AttemptWrites(attempts, CONFIG);

    const answers = await Promise.all([writes.claim(key('m')), writes.record(outcome('done'))]);

    expect(answers).toEqual([{ id: 'claim-m', token: 't' }, true]);
    expect(statements.map(({ claims, outcomes }) => ({ claims, outcomes }))).toEqual([
      { claims: ['m'], outcomes: ['done'] },
      { claims: ['m'], outcomes: [] },
      { claims: [], outcomes: ['done'] },
    ]);
  });
});
