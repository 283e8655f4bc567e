import { randomUUID } from 'node:crypto';

import { DataSource } from 'typeorm';

import { webhooksDataSourceOptions } from '../src/database/data-source-options';
import { runWebhooksMigrations } from '../src/database/run-webhooks-migrations';
import { updatedRows } from '../src/database/updated-rows';
import {
  type AttemptRecord,
  type ClaimedDelivery,
  type ClaimLimits,
  DeliveriesRepository,
  type NewDelivery,
} from '../src/dispatch/deliveries.repository';

/**
 * The deliveries' statements against the real webhooks schema: fresh deliveries leased as they
 * are written (within the places a claim would give), and attempts recorded in batches with
 * exact counters.
 */
describe('DeliveriesRepository against PostgreSQL', () => {
  let dataSource: DataSource | undefined;
  let deliveries: DeliveriesRepository;
  const lease: ClaimLimits = { perWebhook: 2, held: [], limit: 10, leaseMs: 60_000 };

  beforeAll(async () => {
    const url = process.env['DATABASE_URL'] ?? '';
    await runWebhooksMigrations(url);
    dataSource = new DataSource(webhooksDataSourceOptions(url, 4));
    await dataSource.initialize();
    deliveries = new DeliveriesRepository(dataSource);
  }, 60_000);

  afterAll(async () => {
    await dataSource?.destroy();
  });

  function db(): DataSource {
    if (!dataSource) throw new Error('the database did not start');
    return dataSource;
  }

  async function webhook(errorsSinceLastSuccess = 0): Promise<{ id: string; accountId: string }> {
    const id = randomUUID();
    const accountId = randomUUID();
    await db().query(
      `INSERT INTO webhooks.webhooks (id, account_id, name, url, enabled, scope, secret_ciphertext,
         errors_since_last_success)
       VALUES ($1, $2, 'hook', $3, true, 'global', 'sealed', $4)`,
      [id, accountId, `https://hooks.example/${id}`, errorsSinceLastSuccess],
    );
    return { id, accountId };
  }

  function fresh(hook: { id: string; accountId: string }, count: number): NewDelivery[] {
    return Array.from({ length: count }, () => ({
      id: randomUUID(),
      webhookId: hook.id,
      accountId: hook.accountId,
      eventId: randomUUID(),
      eventType: 'message.delivered',
      body: '{}',
    }));
  }

  async function leasedIds(webhookId: string): Promise<string[]> {
    const rows = await db().query<Array<{ id: string }>>(
      `SELECT id FROM webhooks.webhook_deliveries
       WHERE webhook_id = $1 AND lease_token IS NOT NULL AND lease_until > now() ORDER BY seq`,
      [webhookId],
    );
    return rows.map((row) => row.id);
  }

  async function counters(webhookId: string) {
    const [row] = await db().query<
      Array<{
        success_count: string;
        error_count: string;
        errors_since_last_success: number;
        enabled: boolean;
        disabled_reason: string | null;
      }>
    >(
      `SELECT success_count, error_count, errors_since_last_success, enabled, disabled_reason
       FROM webhooks.webhooks WHERE id = $1`,
      [webhookId],
    );
    return row;
  }

  it('leases fresh deliveries within each webhook’s free places and the limit, in order', async () => {
    const a = await webhook();
    const b = await webhook();
    const written = [...fresh(a, 3), ...fresh(b, 1)];
    const leased = await deliveries.insert(written, lease);

    expect(leased.map((delivery) => delivery.id).sort()).toEqual(
      [written[0]?.id, written[1]?.id, written[3]?.id].sort(),
    );
    expect(leased.find((delivery) => delivery.webhookId === b.id)).toMatchObject({
      url: `https://hooks.example/${b.id}`,
      secretCiphertext: 'sealed',
      attempts: 0,
    });
    expect(await leasedIds(a.id)).toEqual([written[0]?.id, written[1]?.id]);
    // The third is written, unleased, for a claim to take once a place frees.
    const [third] = await db().query<Array<{ state: string; lease_token: string | null }>>(
      'SELECT state, lease_token FROM webhooks.webhook_deliveries WHERE id = $1',
      [written[2]?.id],
    );
    expect(third).toEqual({ state: 'pending', lease_token: null });
  });

  it('leases no more than the limit, each webhook’s first deliveries first', async () => {
    const a = await webhook();
    const b = await webhook();
    const written = [...fresh(a, 2), ...fresh(b, 2)];
    const leased = await deliveries.insert(written, { ...lease, limit: 2 });
    expect(leased.map((delivery) => delivery.id).sort()).toEqual(
      [written[0]?.id, written[2]?.id].sort(),
    );
  });

  it('leases nothing while older deliveries wait unleased, one place to a failing webhook', async () => {
    const waiting = await webhook();
    await deliveries.insert(fresh(waiting, 1));
    expect(await deliveries.insert(fresh(waiting, 1), lease)).toEqual([]);

    const failing = await webhook(3);
    expect(await deliveries.insert(fresh(failing, 2), lease)).toHaveLength(1);
    // Its place is taken now.
    expect(await deliveries.insert(fresh(failing, 1), lease)).toEqual([]);
  });

  it('leases more of a webhook only to the replica holding some of its deliveries', async () => {
    const hook = await webhook();
    expect(await deliveries.insert(fresh(hook, 1), lease)).toHaveLength(1);
    // Another replica (not holding the webhook) gets none, by insert or by claim.
    expect(await deliveries.insert(fresh(hook, 1), lease)).toEqual([]);
    const claimed = await deliveries.claimDue({ ...lease, limit: 100 });
    expect(claimed.filter((delivery) => delivery.webhookId === hook.id)).toEqual([]);
    // The holder claims the one left unleased, its remaining place.
    const holder = { ...lease, held: [hook.id], limit: 100 };
    const held = await deliveries.claimDue(holder);
    expect(held.filter((delivery) => delivery.webhookId === hook.id)).toHaveLength(1);
    expect(await leasedIds(hook.id)).toHaveLength(2);
  });

  it('leases nothing without a lease, nor for a pair already written', async () => {
    const hook = await webhook();
    const written = fresh(hook, 1);
    expect(await deliveries.insert(written)).toEqual([]);
    await db().query(
      `UPDATE webhooks.webhook_deliveries SET state = 'delivered' WHERE webhook_id = $1`,
      [hook.id],
    );
    const again = written.map((delivery) => ({ ...delivery, id: randomUUID() }));
    expect(await deliveries.insert(again, lease)).toEqual([]);
    expect(await leasedIds(hook.id)).toEqual([]);
  });

  describe('recordAttempts', () => {
    const start = Date.now();
    function record(
      delivery: ClaimedDelivery,
      second: number,
      status: number,
      overrides: Partial<AttemptRecord> = {},
    ): AttemptRecord {
      const succeeded = status < 300;
      return {
        deliveryId: delivery.id,
        leaseToken: delivery.leaseToken,
        state: succeeded ? 'delivered' : status === 410 ? 'given_up' : 'pending',
        nextAttemptAt: succeeded || status === 410 ? null : new Date(start + 60_000),
        attemptedAt: new Date(start + second * 1_000),
        responseStatus: status,
        error: null,
        durationMs: 4,
        responseBody: `answered ${status}`,
        succeeded,
        gone: status === 410,
        ...overrides,
      };
    }

    it('records a batch over webhooks: states, attempts and counters, in the order made', async () => {
      const a = await webhook(1);
      const b = await webhook();
      const leasedA = await deliveries.insert(fresh(a, 1), lease);
      const leasedB = await deliveries.insert(fresh(b, 2), lease);
      const [onA] = leasedA;
      const [first, second] = leasedB;
      if (!onA || !first || !second) throw new Error('expected leased deliveries');
      // Out of order: b's success (second 2) comes after its failure (second 1).
      const recorded = await deliveries.recordAttempts(
        [record(onA, 3, 503), record(second, 2, 200), record(first, 1, 500)],
        100,
      );

      expect(Object.fromEntries(recorded)).toEqual({
        [onA.id]: { webhookEnabled: true, accountId: a.accountId },
        [first.id]: { webhookEnabled: true, accountId: b.accountId },
        [second.id]: { webhookEnabled: true, accountId: b.accountId },
      });
      expect(await counters(a.id)).toMatchObject({
        success_count: '0',
        error_count: '1',
        errors_since_last_success: 2,
      });
      expect(await counters(b.id)).toMatchObject({
        success_count: '1',
        error_count: '1',
        errors_since_last_success: 0,
      });
      const states = await db().query<Array<{ id: string; state: string; attempts: number }>>(
        `SELECT id, state, attempts FROM webhooks.webhook_deliveries
         WHERE id = ANY($1::uuid[]) AND lease_token IS NULL`,
        [[onA.id, first.id, second.id]],
      );
      expect(Object.fromEntries(states.map((row) => [row.id, [row.state, row.attempts]]))).toEqual({
        [onA.id]: ['pending', 1],
        [first.id]: ['pending', 1],
        [second.id]: ['delivered', 1],
      });
      const attempts = await db().query<Array<{ delivery_id: string; response_body: string }>>(
        `SELECT delivery_id, response_body FROM webhooks.webhook_attempts
         WHERE webhook_id = ANY($1::uuid[]) ORDER BY response_body`,
        [[a.id, b.id]],
      );
      expect(attempts).toEqual([
        { delivery_id: second.id, response_body: 'answered 200' },
        { delivery_id: first.id, response_body: 'answered 500' },
        { delivery_id: onA.id, response_body: 'answered 503' },
      ]);
    });

    it('disables on the failure that reaches the limit, and on 410 Gone', async () => {
      const failing = await webhook(1);
      const gone = await webhook();
      const [x, y] = await deliveries.insert(fresh(failing, 2), { ...lease, perWebhook: 1 });
      // A failing webhook has one place: lease the second by a claim-like update.
      const second = y ?? (await leaseAnother(failing.id));
      const [g] = await deliveries.insert(fresh(gone, 1), lease);
      if (!x || !g) throw new Error('expected leased deliveries');

      const recorded = await deliveries.recordAttempts(
        [record(x, 1, 500), record(second, 2, 200), record(g, 1, 410)],
        2,
      );
      expect(recorded.get(x.id)).toEqual({ webhookEnabled: false, accountId: failing.accountId });
      expect(await counters(failing.id)).toMatchObject({
        enabled: false,
        disabled_reason: 'too many consecutive failed calls',
        success_count: '1',
        errors_since_last_success: 0,
      });
      expect(await counters(gone.id)).toMatchObject({
        enabled: false,
        disabled_reason: 'the endpoint answered 410 Gone',
      });
    });

    it('records nothing for an attempt whose lease was lost, and counts it nowhere', async () => {
      const hook = await webhook();
      const [lost, kept] = await deliveries.insert(fresh(hook, 2), lease);
      if (!lost || !kept) throw new Error('expected leased deliveries');
      const recorded = await deliveries.recordAttempts(
        [record(lost, 1, 200, { leaseToken: randomUUID() }), record(kept, 2, 200)],
        100,
      );
      expect([...recorded.keys()]).toEqual([kept.id]);
      expect(await counters(hook.id)).toMatchObject({ success_count: '1', error_count: '0' });
      const [row] = await db().query<Array<{ attempts: number; lease_token: string | null }>>(
        'SELECT attempts, lease_token FROM webhooks.webhook_deliveries WHERE id = $1',
        [lost.id],
      );
      expect(row).toEqual({ attempts: 0, lease_token: lost.leaseToken });
    });

    async function leaseAnother(webhookId: string): Promise<ClaimedDelivery> {
      const result = await db().query<unknown>(
        `UPDATE webhooks.webhook_deliveries
         SET lease_token = gen_random_uuid(), lease_until = now() + interval '1 minute'
         WHERE webhook_id = $1 AND lease_token IS NULL RETURNING id, lease_token`,
        [webhookId],
      );
      const [row] = updatedRows<{ id: string; lease_token: string }>(result);
      if (!row) throw new Error('expected an unleased delivery');
      return {
        id: row.id,
        webhookId,
        eventId: randomUUID(),
        eventType: 'message.delivered',
        body: '{}',
        attempts: 0,
        leaseToken: row.lease_token,
        url: '',
        secretCiphertext: '',
        webhookFailing: true,
      };
    }
  });

  describe('storeFanOut', () => {
    interface StoredRow {
      id: string;
      state: string;
      attempts: number;
      leased: boolean;
      due_now: boolean;
    }

    async function rowsOf(webhookId: string): Promise<StoredRow[]> {
      return db().query<StoredRow[]>(
        `SELECT id, state, attempts, lease_token IS NOT NULL AS leased,
           next_attempt_at <= now() AS due_now
         FROM webhooks.webhook_deliveries WHERE webhook_id = $1 ORDER BY seq`,
        [webhookId],
      );
    }

    function attempted(delivery: NewDelivery, status: number) {
      const succeeded = status < 300;
      return {
        ...delivery,
        state: succeeded ? ('delivered' as const) : ('pending' as const),
        nextAttemptAt: succeeded ? null : new Date(Date.now() + 60_000),
        attemptedAt: new Date(),
        responseStatus: status,
        error: null,
        durationMs: 3,
        responseBody: `answered ${status}`,
        succeeded,
        gone: false,
      };
    }

    it('stores first attempts with their results, unsent deliveries due and running ones leased', async () => {
      const hook = await webhook();
      const [ok, failed, unsent, running] = fresh(hook, 4);
      if (!ok || !failed || !unsent || !running) throw new Error('expected deliveries');

      const stored = await deliveries.storeFanOut(
        {
          attempted: [attempted(ok, 200), attempted(failed, 503)],
          unsent: [unsent],
          leased: [running],
          leaseMs: 60_000,
        },
        100,
      );

      expect(Object.fromEntries(stored.recorded)).toEqual({
        [ok.id]: { webhookEnabled: true, accountId: hook.accountId },
        [failed.id]: { webhookEnabled: true, accountId: hook.accountId },
      });
      expect([...stored.leaseTokens.keys()]).toEqual([running.id]);
      expect(await rowsOf(hook.id)).toEqual([
        { id: ok.id, state: 'delivered', attempts: 1, leased: false, due_now: true },
        { id: failed.id, state: 'pending', attempts: 1, leased: false, due_now: false },
        { id: unsent.id, state: 'pending', attempts: 0, leased: false, due_now: true },
        { id: running.id, state: 'pending', attempts: 0, leased: true, due_now: true },
      ]);
      const attempts = await db().query<Array<{ delivery_id: string; attempt: number }>>(
        `SELECT delivery_id, attempt FROM webhooks.webhook_attempts WHERE webhook_id = $1
         ORDER BY seq`,
        [hook.id],
      );
      expect(attempts).toEqual([
        { delivery_id: ok.id, attempt: 1 },
        { delivery_id: failed.id, attempt: 1 },
      ]);
      expect(await counters(hook.id)).toMatchObject({
        success_count: '1',
        error_count: '1',
        errors_since_last_success: 1,
      });

      // The running call ends: its attempt is recorded under the lease it was stored with.
      const leaseToken = stored.leaseTokens.get(running.id) ?? '';
      const recorded = await deliveries.recordAttempts(
        [{ ...attempted(running, 200), deliveryId: running.id, leaseToken }],
        100,
      );
      expect([...recorded.keys()]).toEqual([running.id]);
    });

    it('stores every field as given: texts with quotes, escapes and non-ASCII, times to the ms', async () => {
      const hook = await webhook();
      const [delivery] = fresh(hook, 1);
      if (!delivery) throw new Error('expected a delivery');
      const body = '{"subject":"\\"quoted\\" \\\\ back\\nslash","name":"Zoë 🚀","tab":"\\t"}';
      const attemptedAt = new Date('2026-11-26T10:00:00.123Z');
      const nextAttemptAt = new Date('2026-11-26T10:01:00.456Z');

      await deliveries.storeFanOut(
        {
          attempted: [
            {
              ...delivery,
              body,
              state: 'pending',
              nextAttemptAt,
              attemptedAt,
              responseStatus: 500,
              error: 'network: "odd" \\ reply',
              durationMs: 1_234,
              responseBody: 'nope "x" \\ é\nline',
              succeeded: false,
              gone: false,
            },
          ],
          unsent: [],
          leased: [],
          leaseMs: 60_000,
        },
        100,
      );

      const [stored] = await db().query<Array<Record<string, unknown>>>(
        `SELECT d.body, d.event_id, d.event_type, d.account_id, d.next_attempt_at,
           a.attempted_at, a.response_status, a.error, a.duration_ms, a.response_body,
           a.next_retry_at
         FROM webhooks.webhook_deliveries d JOIN webhooks.webhook_attempts a ON a.delivery_id = d.id
         WHERE d.id = $1`,
        [delivery.id],
      );
      expect(stored).toEqual({
        body,
        event_id: delivery.eventId,
        event_type: 'message.delivered',
        account_id: hook.accountId,
        next_attempt_at: nextAttemptAt,
        attempted_at: attemptedAt,
        response_status: 500,
        error: 'network: "odd" \\ reply',
        duration_ms: 1_234,
        response_body: 'nope "x" \\ é\nline',
        next_retry_at: nextAttemptAt,
      });
    });

    it('counts a batch of successes over webhooks in its one statement', async () => {
      const a = await webhook(2);
      const b = await webhook();
      const toA = fresh(a, 2);
      const toB = fresh(b, 1);

      const stored = await deliveries.storeFanOut(
        {
          attempted: [...toA, ...toB].map((delivery) => attempted(delivery, 200)),
          unsent: [],
          leased: [],
          leaseMs: 1,
        },
        100,
      );

      expect(stored.recorded.size).toBe(3);
      expect(await counters(a.id)).toMatchObject({
        success_count: '2',
        error_count: '0',
        errors_since_last_success: 0,
      });
      expect(await counters(b.id)).toMatchObject({ success_count: '1', error_count: '0' });
    });

    it('leaves a pair stored before, and a deleted webhook, alone and counts nothing for them', async () => {
      const hook = await webhook();
      const [first] = fresh(hook, 1);
      if (!first) throw new Error('expected a delivery');
      await deliveries.insert([first]);
      const again = { ...first, id: randomUUID() };
      const gone = await webhook();
      const [toGone] = fresh(gone, 1);
      if (!toGone) throw new Error('expected a delivery');
      await db().query('DELETE FROM webhooks.webhooks WHERE id = $1', [gone.id]);

      const stored = await deliveries.storeFanOut(
        {
          attempted: [attempted(again, 200), attempted(toGone, 200)],
          unsent: [],
          leased: [],
          leaseMs: 1,
        },
        100,
      );

      expect(stored.recorded.size).toBe(0);
      expect(await rowsOf(hook.id)).toEqual([
        { id: first.id, state: 'pending', attempts: 0, leased: false, due_now: true },
      ]);
      expect(await counters(hook.id)).toMatchObject({ success_count: '0', error_count: '0' });
    });
  });
});
