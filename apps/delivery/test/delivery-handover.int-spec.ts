import type { DeliveryView } from '@envoi/contracts-messages';
import { pollUntil } from '@envoi/shared-testing';

import {
  attemptsOfAll,
  deliveryJobsInfo,
  type DeliveryTestApp,
  isDelivered,
  newSender,
  publishJob,
  recipientDomain,
  registerMessage,
  startDeliveryTestApp,
  type TestSender,
  unique,
  waitForEveryJobAcknowledged,
} from './delivery-test-app';
import type { ChildHandle } from './isolated-platform';

/** The sink answers each message this long after its final dot: sessions stay open. */
const SLOW_MS = 8_000;
const JOBS = 10;
/** Compressed handover: a dead worker's jobs and claims end after 3 s (30 s by default). */
const ACK_WAIT_MS = 3_000;
const CLAIM_TTL_MS = 3_000;
/**
 * Scheduling, a pull and a query between a claim's end and the takeover, on a loaded machine. The
 * bounds stay far below what they guard against: the attempt deadline (900 s) and the default
 * ack wait (30 s); an unstarted job claimed by mistake shows as a takeover deferral.
 */
const SLACK_MS = 2 * ACK_WAIT_MS;
const SHARED_ENV = {
  DELIVERY_ACK_WAIT_MS: String(ACK_WAIT_MS),
  DELIVERY_CLAIM_TTL_MS: String(CLAIM_TTL_MS),
  // The attempt deadline (and the lease it used to set) stays long: it must not be what ends it.
  SMTP_ATTEMPT_TIMEOUT_MS: '900000',
  SMTP_SOCKET_TIMEOUT_MS: String(SLOW_MS * 3),
  SHUTDOWN_GRACE_MS: '1000',
};
/** The worker killed: fewer slots than jobs, fewer connections than slots. */
const DOOMED_CONNECTIONS = 2;
/** Jobs the doomed worker holds without a connection. */
const WAITING = 4;
const DOOMED_ENV = {
  ...SHARED_ENV,
  DELIVERY_CONCURRENCY: String(DOOMED_CONNECTIONS + WAITING),
  DELIVERY_READ_AHEAD: '0',
  SMTP_MAX_CONNECTIONS_PER_HOST: String(DOOMED_CONNECTIONS),
};
/** The survivor: room for every job at once. */
const SURVIVOR_ENV = {
  ...SHARED_ENV,
  DELIVERY_CONCURRENCY: String(JOBS * 2),
  SMTP_MAX_CONNECTIONS_PER_HOST: String(JOBS * 2),
};
const TAKEOVER_REPLY = /may have been received \(RFC 1047\)/;

/**
 * Issue 13's second fault: two delivery workers run as processes from dist/; one, holding more
 * jobs than it has connections, is killed with SIGKILL mid-burst. Its jobs that never reached a
 * server are not claimed: the survivor runs them within an ack wait, as first attempts. Its
 * attempts in session were claimed for DELIVERY_CLAIM_TTL_MS only: the survivor takes them over
 * (RFC 1047 deferral) once the claim ends, and retries them on schedule. Nothing is lost, and
 * nothing waits for the attempt deadline (900 s here).
 */
describe('delivery service: a dead worker hands its jobs over within the claim TTL', () => {
  let app: DeliveryTestApp | undefined;
  let sender: TestSender;
  const workers: ChildHandle[] = [];

  beforeAll(async () => {
    app = await startDeliveryTestApp();
    sender = await newSender(app);
    // Only the worker processes this test starts take jobs.
    await app.service.close();
  }, 180_000);

  afterAll(async () => {
    for (const worker of workers) await worker.stop();
    await app?.close();
  }, 60_000);

  it('delivers the dead worker’s unstarted jobs at once and takes its sessions over', async () => {
    if (!app) throw new Error('the delivery service did not start');
    const test = app;
    const domain = recipientDomain(test);

    const doomed = await test.startChildService(DOOMED_ENV);
    workers.push(doomed);
    const views: DeliveryView[] = Array.from({ length: JOBS }, () =>
      registerMessage(test, sender, [`slow${SLOW_MS}-${unique('h')}@${domain}`]),
    );
    for (const view of views) await publishJob(test, view);
    // The doomed worker is full: two sessions, the others waiting for a connection.
    await pollUntil(
      async () => ({ jobs: await deliveryJobsInfo(test), open: await test.sink.openConnections() }),
      ({ jobs, open }) =>
        jobs.num_ack_pending === DOOMED_CONNECTIONS + WAITING && open === DOOMED_CONNECTIONS,
      { what: 'the first worker full', timeoutMs: 15_000 },
    );

    const survivor = await test.startChildService(SURVIVOR_ENV);
    workers.push(survivor);
    const ids = views.map((view) => view.id);
    // Every job is in a session but the four the doomed worker holds without a connection.
    const before = await pollUntil(
      () => attemptsOfAll(test, ids),
      (attempts) => attempts.length >= JOBS - WAITING,
      { what: 'the survivor in session with the rest', timeoutMs: 15_000 },
    );
    const killedAt = Date.now();
    await doomed.kill();
    expect(doomed.child.signalCode).toBe('SIGKILL');

    // Jobs not claimed at the kill: the doomed worker's, waiting for a connection.
    const unstarted = ids.filter((id) => !before.some((attempt) => attempt.message_id === id));
    expect(unstarted).toHaveLength(WAITING);

    await pollUntil(
      () => views.filter((view) => test.events.of(view.id).some(isDelivered)).length,
      (delivered) => delivered === JOBS,
      { what: 'every message delivered', timeoutMs: 40_000 },
    );
    const attempts = await attemptsOfAll(test, ids);
    expect(attempts.filter((attempt) => attempt.state !== 'done')).toEqual([]);

    // Unstarted jobs: handed over within an ack wait, delivered by their first attempt.
    for (const id of unstarted) {
      const own = attempts.filter((attempt) => attempt.message_id === id);
      expect(own).toEqual([expect.objectContaining({ attempt: 1, status: 'Delivered' })]);
      expect((own[0]?.started_at.getTime() ?? Infinity) - killedAt).toBeLessThan(
        ACK_WAIT_MS + SLACK_MS,
      );
    }
    // Attempts in session at the kill: deferred once their claim ended, then retried.
    const takenOver = attempts.filter((attempt) => TAKEOVER_REPLY.test(attempt.reply));
    for (const attempt of takenOver) {
      expect(attempt.status).toBe('Deferred');
      expect((attempt.finished_at?.getTime() ?? Infinity) - killedAt).toBeLessThan(
        Math.max(ACK_WAIT_MS, CLAIM_TTL_MS) + ACK_WAIT_MS + SLACK_MS,
      );
    }
    for (const view of views) {
      const types = test.events.of(view.id).map((event) => event.type);
      expect(types.at(-1)).toBe('message.delivered');
      expect(test.sink.receiptsFor(view.envelope_recipients[0] ?? '').length).toBeGreaterThan(0);
    }
    await waitForEveryJobAcknowledged(test, 10_000);
    console.log(
      `handover: ${JOBS} jobs, ${unstarted.length} unstarted and ${takenOver.length} in session ` +
        `at the kill; last delivery ${Date.now() - killedAt} ms after it`,
    );
  }, 120_000);
});
