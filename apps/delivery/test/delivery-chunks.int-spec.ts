import { pollUntil } from '@envoi/shared-testing';

import {
  attemptsOf,
  attemptsOfAll,
  deliveryJobsInfo,
  type DeliveryTestApp,
  isDelivered,
  newSender,
  publishChunkJob,
  publishJob,
  recipientDomain,
  registerMessage,
  startDeliveryTestApp,
  type TestSender,
  unique,
  waitForEveryJobAcknowledged,
} from './delivery-test-app';

/** Messages one replica may deliver at once in the slot test, whatever the number of jobs. */
const SLOTS = 3;

/**
 * Chunk jobs (one first-attempt job per chunk of a send) against the real delivery service,
 * PostgreSQL, NATS and SMTP sinks on loopback: one view call per job, each message settled on its
 * own, a redelivered job skipping what is recorded, and messages (not jobs) bounded per replica.
 */
describe('delivery service: chunk jobs', () => {
  let app: DeliveryTestApp | undefined;
  let sender: TestSender;

  beforeAll(async () => {
    app = await startDeliveryTestApp();
    sender = await newSender(app);
  }, 180_000);

  afterAll(async () => {
    await app?.close();
  }, 60_000);

  const get = (): DeliveryTestApp => {
    if (!app) throw new Error('the delivery service did not start');
    return app;
  };

  it('reads a chunk’s views in one call and settles each message on its own', async () => {
    const app = get();
    const domain = recipientDomain(app);
    const plain = [1, 2, 3].map(() => registerMessage(app, sender, [`c-${unique('u')}@${domain}`]));
    const deferred = registerMessage(app, sender, [`defer1-${unique('u')}@${domain}`]);
    const cancelled = registerMessage(app, sender, [`x-${unique('u')}@${domain}`], {
      status: 'Cancelled',
    });
    const missing = registerMessage(app, sender, [`m-${unique('u')}@${domain}`]);
    app.views.views.delete(missing.id);
    // Too large for the chunk's reply: read alone before it is sent.
    const large = registerMessage(app, sender, [`l-${unique('u')}@${domain}`]);
    app.views.separate.add(large.id);
    const chunk = [...plain, deferred, cancelled, missing, large];
    const batchesBefore = app.views.batches.length;
    const singlesBefore = app.views.singles.length;

    await publishChunkJob(app, chunk);

    for (const view of [...plain, deferred, large]) {
      await pollUntil(
        () => app.events.of(view.id).some(isDelivered),
        (delivered) => delivered,
        { what: `${view.id} delivered`, timeoutMs: 15_000 },
      );
    }
    await waitForEveryJobAcknowledged(app, 10_000);
    // The chunk, then the deferred one's retry (a one-message job, read the same way).
    expect(app.views.batches.slice(batchesBefore)).toEqual([
      chunk.map((view) => view.id),
      [deferred.id],
    ]);
    // Only the large one alone.
    expect(app.views.singles.slice(singlesBefore)).toEqual([large.id]);
    for (const view of [...plain, large]) {
      expect(app.sink.receiptsFor(view.envelope_recipients[0] ?? '')).toHaveLength(1);
      expect(await attemptsOf(app, view.id)).toEqual([
        expect.objectContaining({ attempt: 1, state: 'done', status: 'Delivered' }),
      ]);
    }
    // The deferred message is retried alone, as a one-message job.
    expect((await attemptsOf(app, deferred.id)).map((row) => row.status)).toEqual([
      'Deferred',
      'Delivered',
    ]);
    for (const view of [cancelled, missing]) {
      expect(app.sink.receiptsFor(view.envelope_recipients[0] ?? '')).toEqual([]);
      expect(await attemptsOf(app, view.id)).toEqual([]);
      expect(app.events.of(view.id)).toEqual([]);
    }
  }, 60_000);

  it('a chunk job delivered again skips its messages already recorded', async () => {
    const app = get();
    const domain = recipientDomain(app);
    const done = [1, 2, 3].map(() => registerMessage(app, sender, [`d-${unique('u')}@${domain}`]));
    await publishChunkJob(app, done);
    await pollUntil(
      () => done.filter((view) => app.events.of(view.id).some(isDelivered)).length,
      (count) => count === done.length,
      { what: 'the first chunk delivered', timeoutMs: 15_000 },
    );
    const fresh = [1, 2].map(() => registerMessage(app, sender, [`f-${unique('u')}@${domain}`]));
    const batchesBefore = app.views.batches.length;

    // The same messages again (as after a worker died before acknowledging), plus two new ones.
    await publishChunkJob(app, [...done, ...fresh]);

    await pollUntil(
      () => fresh.filter((view) => app.events.of(view.id).some(isDelivered)).length,
      (count) => count === fresh.length,
      { what: 'the new messages delivered', timeoutMs: 15_000 },
    );
    await waitForEveryJobAcknowledged(app, 10_000);
    expect(app.views.batches.slice(batchesBefore)).toEqual([fresh.map((view) => view.id)]);
    for (const view of [...done, ...fresh]) {
      expect(app.sink.receiptsFor(view.envelope_recipients[0] ?? '')).toHaveLength(1);
      expect(app.events.of(view.id).filter(isDelivered)).toHaveLength(1);
    }
  }, 60_000);

  it('records the outcomes of a chunk’s messages that end together in shared statements', async () => {
    const app = get();
    const domain = recipientDomain(app);
    const views = Array.from({ length: 12 }, () =>
      registerMessage(app, sender, [`sb-${unique('u')}@${domain}`], {
        sandbox: true,
        sandbox_result: 'deliver',
      }),
    );

    await publishChunkJob(app, views);

    for (const view of views) await app.events.waitFor(view.id, 1);
    await waitForEveryJobAcknowledged(app, 10_000);
    // Rows written by one statement (its own transaction) carry its transaction id (xmin).
    const transactions = await app.db.query<{ count: string }>(
      `SELECT count(DISTINCT xmin::text) AS count FROM delivery.attempts
        WHERE message_id = ANY($1::uuid[]) AND state = 'done'`,
      [views.map((view) => view.id)],
    );
    expect(Number(transactions.rows[0]?.count)).toBeGreaterThanOrEqual(1);
    expect(Number(transactions.rows[0]?.count)).toBeLessThan(views.length / 2);
    for (const view of views) {
      expect(await attemptsOf(app, view.id)).toEqual([
        expect.objectContaining({ attempt: 1, state: 'done', status: 'Sandbox Delivered' }),
      ]);
      expect(app.events.of(view.id)).toHaveLength(1);
    }
  }, 60_000);

  it('delivers at most DELIVERY_CONCURRENCY messages at once, however many chunk jobs', async () => {
    const app = get();
    await app.service.close();
    await app.startService({
      DELIVERY_CONCURRENCY: String(SLOTS),
      SMTP_MAX_CONNECTIONS_PER_HOST: '40',
    });
    const domain = recipientDomain(app);
    const chunks = [1, 2, 3].map(() =>
      Array.from({ length: 8 }, () =>
        registerMessage(app, sender, [`slow300-${unique('s')}@${domain}`]),
      ),
    );
    for (const chunk of chunks) await publishChunkJob(app, chunk);
    const views = chunks.flat();

    await pollUntil(
      () => views.filter((view) => app.events.of(view.id).some(isDelivered)).length,
      (count) => count === views.length,
      { what: 'every message of the chunks delivered', timeoutMs: 40_000 },
    );
    await waitForEveryJobAcknowledged(app, 10_000);
    // Each attempt runs from its start to its record within a slot: they never overlap more.
    const attempts = await attemptsOfAll(
      app,
      views.map((view) => view.id),
    );
    expect(attempts).toHaveLength(views.length);
    const edges = attempts.flatMap((attempt) => [
      { at: attempt.started_at.getTime(), change: 1 },
      { at: attempt.finished_at?.getTime() ?? Infinity, change: -1 },
    ]);
    edges.sort((a, b) => a.at - b.at || a.change - b.change);
    let running = 0;
    let most = 0;
    for (const edge of edges) {
      running += edge.change;
      most = Math.max(most, running);
    }
    expect(most).toBeGreaterThan(1);
    expect(most).toBeLessThanOrEqual(SLOTS);
  }, 90_000);

  it('reads one-message jobs ahead of its slots, their views together', async () => {
    const app = get();
    await app.service.close();
    await app.startService({
      DELIVERY_CONCURRENCY: '2',
      DELIVERY_READ_AHEAD: '6',
      SMTP_MAX_CONNECTIONS_PER_HOST: '40',
    });
    const domain = recipientDomain(app);
    const views = Array.from({ length: 8 }, () =>
      registerMessage(app, sender, [`slow500-${unique('r')}@${domain}`]),
    );
    const ids = new Set(views.map((view) => view.id));
    const batchesBefore = app.views.batches.length;
    for (const view of views) await publishJob(app, view);

    // Two in session, the six others held and read meanwhile.
    await pollUntil(
      () => deliveryJobsInfo(app),
      (info) => info.num_ack_pending === views.length,
      { what: 'every job held at once', timeoutMs: 10_000 },
    );
    await pollUntil(
      () => views.filter((view) => app.events.of(view.id).some(isDelivered)).length,
      (count) => count === views.length,
      { what: 'every message delivered', timeoutMs: 40_000 },
    );
    await waitForEveryJobAcknowledged(app, 10_000);
    const calls = app.views.batches
      .slice(batchesBefore)
      .filter((batch) => batch.some((id) => ids.has(id)));
    expect(calls.length).toBeLessThan(views.length);
    expect(calls.flat().sort()).toEqual([...ids].sort());
  }, 90_000);
});
