import { pollUntil } from '@envoi/shared-testing';

import {
  attemptsOf,
  type DeliveryTestApp,
  newSender,
  publishJob,
  recipientDomain,
  registerMessage,
  startDeliveryTestApp,
  type TestSender,
  unique,
} from './delivery-test-app';
import { verifyDkim } from './dkim-verify';

/**
 * The delivery service (in this process) against real PostgreSQL, NATS (JetStream), the real
 * domains service (DKIM keys), a DNS server on loopback and smtp-server sinks on loopback. Jobs
 * are published to the DELIVERY stream as the messages service's relay does; the message views
 * come from a responder standing in for the messages service.
 */
describe('delivery service', () => {
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

  it('delivers once over STARTTLS, DKIM-signed, from a per-message bounce address', async () => {
    const app = get();
    const to = `accept-${unique('u')}@${recipientDomain(app)}`;
    const view = registerMessage(app, sender, [to]);
    await publishJob(app, view);

    const [event] = await app.events.waitFor(view.id, 1);
    expect(event).toMatchObject({
      type: 'message.delivered',
      data: {
        id: view.id,
        account_id: sender.accountId,
        event: 'on_delivered',
        recipient: to,
        status: 'Delivered',
        sandbox: false,
        attempt: { attempt: 1, status: 'Delivered', remote_host: `mx.${to.split('@')[1]}` },
      },
    });
    expect(event?.data.attempt.reply).toMatch(/^250 /);
    const receipts = app.sink.receiptsFor(to);
    expect(receipts).toHaveLength(1);
    const receipt = receipts[0];
    expect(receipt.secure).toBe(true);
    // The domain's return-path CNAME is verified (its records are published): VERP on its host.
    expect(receipt.mailFrom).toMatch(
      new RegExp(
        `^bounce\\+${view.id}@[a-z0-9.-]+\\.${sender.domain.domain.replace(/\./g, '\\.')}$`,
      ),
    );
    const dkim = verifyDkim(receipt.raw, sender.txt);
    expect(dkim).toMatchObject({ ok: true, domain: sender.domain.domain });
    expect(dkim.signedHeaders).toEqual(
      expect.arrayContaining(['from', 'to', 'subject', 'date', 'message-id']),
    );
    // Dot-stuffing round trip and exact bytes otherwise.
    expect(receipt.raw.toString()).toContain('\r\n.a line starting with a dot\r\n');

    const attempts = await attemptsOf(app, view.id);
    expect(attempts).toEqual([
      expect.objectContaining({ attempt: 1, state: 'done', status: 'Delivered', tls: true }),
    ]);
  });

  it('never sends twice for a job seen twice', async () => {
    const app = get();
    const to = `accept-${unique('dup')}@${recipientDomain(app)}`;
    const view = registerMessage(app, sender, [to]);
    // The same job twice at once (different Nats-Msg-Id: past the stream's duplicate window).
    await Promise.all([publishJob(app, view), publishJob(app, view)]);
    await app.events.waitFor(view.id, 1);
    // And once more after its outcome is recorded.
    await publishJob(app, view);
    await pollUntil(
      async () =>
        (await app.connection.jetstreamManager()).consumers.info('DELIVERY', 'delivery-workers'),
      (info) => info.num_pending === 0 && info.num_ack_pending === 0,
      { what: 'every job acknowledged', timeoutMs: 15_000 },
    );
    expect(app.sink.receiptsFor(to)).toHaveLength(1);
    expect(app.events.of(view.id)).toHaveLength(1);
    expect(await attemptsOf(app, view.id)).toHaveLength(1);
  });

  it('retries deferrals on the schedule, then delivers', async () => {
    const app = get();
    const to = `defer2-${unique('d')}@${recipientDomain(app)}`;
    const view = registerMessage(app, sender, [to]);
    await publishJob(app, view);

    const events = await app.events.waitFor(view.id, 3, 20_000);
    expect(events.map((event) => event.type)).toEqual([
      'message.transient_error',
      'message.transient_error',
      'message.delivered',
    ]);
    expect(events.map((event) => event.data.status)).toEqual(['Deferred', 'Deferred', 'Delivered']);
    expect(events[0]?.data.attempt.reply).toMatch(/^451 4\.3\.0/);
    const attempts = await attemptsOf(app, view.id);
    expect(attempts.map((attempt) => attempt.attempt)).toEqual([1, 2, 3]);
    // Schedule 400 ms then 800 ms (no jitter in tests): starts at least that far apart.
    const gap = (a: number, b: number) =>
      attempts[b].started_at.getTime() -
      (attempts[a].finished_at ?? attempts[a].started_at).getTime();
    expect(gap(0, 1)).toBeGreaterThanOrEqual(390);
    expect(gap(1, 2)).toBeGreaterThanOrEqual(790);
    expect(app.sink.receiptsFor(to)).toHaveLength(1);
  });

  it('gives up after the last scheduled retry: Failed', async () => {
    const app = get();
    const to = `close421-${unique('c')}@${recipientDomain(app)}`;
    const view = registerMessage(app, sender, [to]);
    await publishJob(app, view);

    const events = await app.events.waitFor(view.id, 3, 20_000);
    expect(events.map((event) => event.type)).toEqual([
      'message.transient_error',
      'message.transient_error',
      'message.failed',
    ]);
    expect(events[2]?.data).toMatchObject({ status: 'Failed', attempt: { attempt: 3 } });
    expect(events[2]?.data.attempt.reply).toMatch(/^421 4\.4\.2 .*giving up: no retry left/);
  });

  it('bounces a 550 5.1.1 as hard after one attempt', async () => {
    const app = get();
    const to = `reject-${unique('b')}@${recipientDomain(app)}`;
    const view = registerMessage(app, sender, [to]);
    await publishJob(app, view);

    const [event] = await app.events.waitFor(view.id, 1);
    expect(event).toMatchObject({
      type: 'message.bounced',
      data: { status: 'Bounced', bounce_classification: 'hard', attempt: { attempt: 1 } },
    });
    expect(event?.data.attempt.reply).toMatch(/^550 5\.1\.1/);
    expect(await attemptsOf(app, view.id)).toEqual([
      expect.objectContaining({ status: 'Bounced', bounce_classification: 'hard' }),
    ]);
    expect(app.sink.receiptsFor(to)).toHaveLength(0);
  });

  it('drops an expired message without any network I/O', async () => {
    const app = get();
    const domain = recipientDomain(app);
    const to = `accept-${unique('e')}@${domain}`;
    const view = registerMessage(app, sender, [to], {
      expires_at: new Date(Date.now() - 1_000).toISOString(),
    });
    const connections = app.sink.connections;
    await publishJob(app, view);

    const [event] = await app.events.waitFor(view.id, 1);
    expect(event).toMatchObject({
      type: 'message.failed',
      data: { status: 'Expired', attempt: { reply: 'expired before delivery', remote_host: '' } },
    });
    expect(app.sink.connections).toBe(connections);
    expect(app.dns.queries.some((query) => query.name === domain)).toBe(false);
  });

  it('gives sandbox messages their simulated outcome without any network I/O', async () => {
    const app = get();
    const domain = recipientDomain(app);
    const connections = app.sink.connections;
    const cases = [
      ['deliver', 'message.delivered', 'Sandbox Delivered'],
      ['bounce', 'message.bounced', 'Sandbox Bounced'],
      ['defer', 'message.transient_error', 'Sandbox Deferred'],
      ['fail', 'message.failed', 'Sandbox Failed'],
      ['suppress', 'message.suppressed', 'Sandbox Suppressed'],
    ] as const;
    const views = cases.map(([result]) =>
      registerMessage(app, sender, [`accept-${unique('sb')}@${domain}`], {
        sandbox: true,
        sandbox_result: result,
      }),
    );
    await Promise.all(views.map((view) => publishJob(app, view)));
    for (const [index, [, type, status]] of cases.entries()) {
      const [event] = await app.events.waitFor(views[index].id, 1);
      expect(event).toMatchObject({ type, data: { status, sandbox: true } });
    }
    expect(app.sink.connections).toBe(connections);
    expect(app.dns.queries.some((query) => query.name === domain)).toBe(false);
  });

  it('delivers in plain text to a server without STARTTLS, and to the next MX when one fails', async () => {
    const app = get();
    const domain = `${unique('mx')}.dest.test`;
    // The preferred MX drops every connection before its greeting, the next one refuses
    // connections, the last one has no STARTTLS.
    app.sink.mode = 'drop-greeting';
    app.dns.set(domain, [
      { type: 'MX', exchange: `mx0.${domain}`, priority: 1 },
      { type: 'MX', exchange: `mx1.${domain}`, priority: 5 },
      { type: 'MX', exchange: `mx2.${domain}`, priority: 10 },
    ]);
    app.dns.set(`mx0.${domain}`, [{ type: 'A', address: '127.0.0.1' }]);
    app.dns.set(`mx1.${domain}`, [{ type: 'A', address: '127.0.0.3' }]);
    app.dns.set(`mx2.${domain}`, [{ type: 'A', address: '127.0.0.2' }]);
    const to = `accept-${unique('p')}@${domain}`;
    const view = registerMessage(app, sender, [to]);
    const connections = app.sink.connections;
    await publishJob(app, view);

    let event;
    try {
      [event] = await app.events.waitFor(view.id, 1);
    } finally {
      app.sink.mode = 'normal';
    }
    expect(event).toMatchObject({
      type: 'message.delivered',
      data: { attempt: { remote_host: `mx2.${domain}` } },
    });
    // The dropped greeting was tried first.
    expect(app.sink.connections).toBeGreaterThan(connections);
    expect(app.plainSink.receiptsFor(to)).toEqual([expect.objectContaining({ secure: false })]);
    expect(await attemptsOf(app, view.id)).toEqual([expect.objectContaining({ tls: false })]);
  });

  it('reuses pooled connections (fewer connections than messages)', async () => {
    const app = get();
    const domain = recipientDomain(app);
    const before = app.service.pool.connectionsOpened;
    const views = Array.from({ length: 8 }, () =>
      registerMessage(app, sender, [`accept-${unique('pool')}@${domain}`]),
    );
    for (const view of views) await publishJob(app, view);
    for (const view of views) await app.events.waitFor(view.id, 1);
    const opened = app.service.pool.connectionsOpened - before;
    expect(opened).toBeGreaterThanOrEqual(1);
    expect(opened).toBeLessThanOrEqual(Number(app.env['SMTP_MAX_CONNECTIONS_PER_HOST']));
    expect(opened).toBeLessThan(views.length);
  });

  it('lets an in-flight session finish when it stops, and loses nothing', async () => {
    const app = get();
    const to = `slow1200-${unique('g')}@${recipientDomain(app)}`;
    const view = registerMessage(app, sender, [to]);
    const later = registerMessage(app, sender, [`accept-${unique('g')}@${recipientDomain(app)}`]);
    await publishJob(app, view);
    await pollUntil(
      () => app.service.worker.busy,
      (busy) => busy > 0,
      { what: 'the session in flight' },
    );
    await app.service.close();
    // Finished within the grace period, before the service stopped.
    expect(app.sink.receiptsFor(to)).toHaveLength(1);
    // A job published while no worker runs waits in the queue for the next one.
    await publishJob(app, later);
    await app.startService();
    await app.events.waitFor(later.id, 1);
    await app.events.waitFor(view.id, 1);
    // The outcome was recorded by the stopping worker: the job was not run again.
    expect(await attemptsOf(app, view.id)).toEqual([
      expect.objectContaining({ attempt: 1, status: 'Delivered' }),
    ]);
    expect(app.sink.receiptsFor(to)).toHaveLength(1);
  });
});
