import type { DeliveryConfig } from '../delivery.config';
import { AttemptWrites } from './attempt-writes';
import type { AttemptClaim, AttemptsRepository } from './attempts.repository';
import { ClaimKeeper } from './claim-keeper';

const KEY = { messageId: 'm', accountId: 'a', attempt: 1, startedAt: new Date() };

/** The repository's claim and renew, in memory: `taken` holds claims another worker took over. */
function repository() {
  let next = 0;
  const renewals: Array<{ ids: string[]; leaseUntil: Date }> = [];
  const claimStatements: string[][] = [];
  const taken = new Set<string>();
  const attempts = {
    claimAndRecord: (keys: ReadonlyArray<{ messageId: string }>) => {
      claimStatements.push(keys.map((key) => key.messageId));
      return Promise.resolve({
        claims: keys.map(({ messageId }) =>
          messageId === 'held' ? null : { id: `c${++next}`, token: 't' },
        ),
        written: [],
      });
    },
    renew: (claims: readonly AttemptClaim[], leaseUntil: Date) => {
      renewals.push({ ids: claims.map((claim) => claim.id), leaseUntil });
      return Promise.resolve(
        new Set(claims.map((claim) => claim.id).filter((id) => !taken.has(id))),
      );
    },
  };
  return {
    attempts: attempts as unknown as AttemptsRepository,
    renewals,
    taken,
    claimStatements,
  };
}

function keeperWith(attempts: AttemptsRepository): ClaimKeeper {
  const config = { DELIVERY_CLAIM_TTL_MS: 30_000 } as DeliveryConfig;
  return new ClaimKeeper(attempts, config, new AttemptWrites(attempts, config));
}

async function claimOf(
  keeper: ClaimKeeper,
  messageId: string,
  onLost: () => void = () => undefined,
): Promise<AttemptClaim> {
  const claim = await keeper.claim({ ...KEY, messageId }, onLost);
  if (!claim) throw new Error(`${messageId} was not claimed`);
  return claim;
}

describe('ClaimKeeper', () => {
  it('renews every claim held in one statement, for a TTL from now', async () => {
    const { attempts, renewals } = repository();
    const keeper = keeperWith(attempts);
    const first = await claimOf(keeper, 'm');
    const second = await claimOf(keeper, 'n');
    const before = Date.now();
    await keeper.renew();
    expect(renewals).toHaveLength(1);
    expect(renewals[0]?.ids).toEqual([first.id, second.id]);
    expect(renewals[0]?.leaseUntil.getTime()).toBeGreaterThanOrEqual(before + 30_000);
    keeper.letGo(first);
    keeper.letGo(second);
    expect(keeper.size).toBe(0);
  });

  it('tells the holder of a claim taken over, and stops renewing it', async () => {
    const { attempts, renewals, taken } = repository();
    const keeper = keeperWith(attempts);
    const lost: string[] = [];
    const kept = await claimOf(keeper, 'm', () => lost.push('kept'));
    const gone = await claimOf(keeper, 'n', () => lost.push('gone'));
    taken.add(gone.id);
    await keeper.renew();
    expect(lost).toEqual(['gone']);
    await keeper.renew();
    expect(renewals[1]?.ids).toEqual([kept.id]);
    keeper.letGo(kept);
  });

  it('gates sessions: claims once, and stops them when the claim is refused or lost', async () => {
    const { attempts, taken } = repository();
    const keeper = keeperWith(attempts);
    const gate = keeper.gate(KEY);
    expect(await gate.open()).toBe(true);
    expect(await gate.open()).toBe(true);
    expect(keeper.size).toBe(1);
    expect(gate.beforeData.aborted).toBe(false);
    taken.add(gate.claim?.id ?? 'none');
    await keeper.renew();
    expect(gate.stopped).toBe('lost');
    expect(gate.beforeData.aborted).toBe(true);
    expect(await gate.open()).toBe(false);
    gate.letGo();

    const refused = keeper.gate({ ...KEY, messageId: 'held' });
    expect(await refused.open()).toBe(false);
    expect(refused.stopped).toBe('refused');
    expect(refused.claim).toBeNull();
    expect(keeper.size).toBe(0);
  });

  it('claims the attempts asked for together in one statement, each answered alone', async () => {
    const { attempts, claimStatements } = repository();
    const keeper = keeperWith(attempts);

    const claims = await Promise.all(
      ['m', 'held', 'n'].map((messageId) => keeper.claim({ ...KEY, messageId }, () => undefined)),
    );

    expect(claimStatements).toEqual([['m', 'held', 'n']]);
    expect(claims.map((claim) => claim?.id ?? null)).toEqual(['c1', null, 'c2']);
    expect(keeper.size).toBe(2);
    for (const claim of claims) if (claim) keeper.letGo(claim);
  });
});
