import { randomUUID } from 'node:crypto';

import { RoutesSubjects } from '@envoi/contracts-routes';
import { pollUntil } from '@envoi/shared-testing';

import { useRoutesTestRig } from './routes-test-rig';

const MESSAGES = 150;
/** The kill lands once this many calls have reached the receiver. */
const KILL_AFTER_CALLS = 30;

function rawMessage(to: string, index: number): Buffer {
  return Buffer.from(
    [
      'From: Customer <customer@example.net>',
      `To: ${to}`,
      `Subject: Burst ${index}`,
      `Message-ID: <${randomUUID()}@example.net>`,
      'Content-Type: text/plain; charset=utf-8',
      '',
      `Message ${index} of the burst.`,
      '',
    ].join('\r\n'),
  );
}

/**
 * The routes service, started from dist/, is killed with SIGKILL (its own PID) in the middle of
 * a burst of routed mail: events whose calls were made but not yet stored stay unacknowledged on
 * the stream, calls stored leased keep their leases. Started again, it calls the route for every
 * message; a call made again carries the same webhook-id, so a receiver that de-duplicates sees
 * each message exactly once.
 */
describe('routes service killed mid-burst', () => {
  // Events in hand at the kill come back once their ack wait ends: 10 s rather than 30 s.
  const rig = useRoutesTestRig('routes_crash', {
    EVENTS_ACK_WAIT_MS: '10000',
    ROUTE_LEASE_MS: '5000',
    ROUTE_TIMEOUT_MS: '2000',
    ROUTE_POLL_INTERVAL_MS: '50',
  });

  it('loses nothing', async () => {
    const test = rig();
    // Answers come 50 ms late, so that calls are in flight when the kill lands.
    test.receiver.behave('burst', () => ({ status: 200, afterMs: 50 }));
    const { accountId, domain } = await test.accountWithDomain();
    const route = await test.rpc().request(RoutesSubjects.create, {
      account_id: accountId,
      body: { name: 'burst', url: test.receiver.url('burst'), recipient: `*@${domain}` },
    });
    const publishing = (async () => {
      for (let index = 0; index < MESSAGES; index++) {
        const address = `burst-${index}@${domain}`;
        await test.receive(accountId, rawMessage(address, index), [
          { address, route_ids: [route.id] },
        ]);
      }
    })();

    await pollUntil(
      () => test.receiver.callsTo('burst').length,
      (calls) => calls >= KILL_AFTER_CALLS,
      { what: `${KILL_AFTER_CALLS} calls before the kill`, timeoutMs: 20_000 },
    );
    expect(await test.killRoutes()).toBe('SIGKILL');
    const subjectsOf = () =>
      new Set(
        test.receiver
          .callsTo('burst')
          .map((call) => (JSON.parse(call.body) as { data: { subject: string } }).data.subject),
      );
    const beforeRestart = subjectsOf().size;
    await publishing;
    expect(beforeRestart).toBeLessThan(MESSAGES);

    await test.restartRoutes();
    const received = await pollUntil(subjectsOf, (subjects) => subjects.size === MESSAGES, {
      what: 'every message at the route URL',
      timeoutMs: 40_000,
    });
    expect([...received].sort()).toEqual(
      Array.from({ length: MESSAGES }, (_, index) => `Burst ${index}`).sort(),
    );
    // A message called twice was called under the same webhook-id each time.
    const idsBySubject = new Map<string, Set<string>>();
    for (const call of test.receiver.callsTo('burst')) {
      const subject = (JSON.parse(call.body) as { data: { subject: string } }).data.subject;
      const ids = idsBySubject.get(subject) ?? new Set<string>();
      ids.add(call.headers['webhook-id'] ?? '');
      idsBySubject.set(subject, ids);
    }
    expect([...idsBySubject.values()].every((ids) => ids.size === 1)).toBe(true);
    await pollUntil(
      async () =>
        test.db.query<Array<{ state: string; count: number }>>(
          `SELECT state, count(*)::int AS count FROM routes.route_deliveries
           WHERE route_id = $1 GROUP BY state`,
          [route.id],
        ),
      (rows) => rows.length === 1 && rows[0]?.state === 'delivered' && rows[0].count === MESSAGES,
      { what: 'every call recorded as delivered', timeoutMs: 20_000 },
    );
    const calls = test.receiver.callsTo('burst').length;
    console.log(
      `routes kill -9: ${MESSAGES} messages, ${beforeRestart} received before the kill, ` +
        `lost ${MESSAGES - received.size}, duplicate calls ${calls - MESSAGES}`,
    );
  }, 90_000);
});
