import { DomainsSubjects } from '@envoi/contracts-domains';
import { pollUntil, type SessionMode, SmtpSink } from '@envoi/shared-testing';

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
import { verifyDkim } from './dkim-check';

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
    // An independent verifier (mailauth) with the key the domains service published in DNS.
    const [dkim, ...others] = await verifyDkim(receipt.raw, app.dns.address);
    expect(others).toHaveLength(0);
    expect(dkim).toMatchObject({
      result: 'pass',
      domain: sender.domain.domain,
      aligned: sender.domain.domain,
      canonicalization: 'relaxed/relaxed',
    });
    expect(dkim?.signedHeaders).toEqual(
      expect.arrayContaining(['from', 'to', 'subject', 'date', 'message-id']),
    );
    // Dot-stuffing round trip and exact bytes otherwise.
    expect(receipt.raw.toString()).toContain('\r\n.a line starting with a dot\r\n');

    const attempts = await attemptsOf(app, view.id);
    expect(attempts).toEqual([
      expect.objectContaining({ attempt: 1, state: 'done', status: 'Delivered', tls: true }),
    ]);
  });

  it('stops signing for a sender domain as soon as it is deleted, within its cache time', async () => {
    const app = get();
    const own = await newSender(app);
    const first = registerMessage(app, own, [`accept-${unique('k')}@${recipientDomain(app)}`]);
    await publishJob(app, first);
    await expect(app.events.waitFor(first.id, 1)).resolves.toEqual([
      expect.objectContaining({ type: 'message.delivered' }),
    ]);

    await app.rpc.request(DomainsSubjects.deleteDomain, {
      account_id: own.accountId,
      domain: own.domain.domain,
    });
    const to = `accept-${unique('k')}@${recipientDomain(app)}`;
    const second = registerMessage(app, own, [to]);
    await publishJob(app, second);

    const [event] = await app.events.waitFor(second.id, 1);
    expect(event).toMatchObject({
      type: 'message.failed',
      data: {
        status: 'Failed',
        attempt: { reply: `the sender domain ${own.domain.domain} no longer exists` },
      },
    });
    expect(app.sink.receiptsFor(to)).toHaveLength(0);
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

  it('settles a job seen again while its attempt is in flight, without waiting for the lease', async () => {
    const app = get();
    const to = `slow600-${unique('dupf')}@${recipientDomain(app)}`;
    const view = registerMessage(app, sender, [to]);
    await publishJob(app, view);
    await pollUntil(
      () => attemptsOf(app, view.id),
      (attempts) => attempts[0]?.state === 'in_progress',
      { what: 'the attempt claimed' },
    );
    await publishJob(app, view);
    await app.events.waitFor(view.id, 1);
    // The duplicate looks again after an ack wait (3 s), not after the lease (18 s): four ack
    // waits leave room for a loaded machine and still end before the lease.
    await pollUntil(
      async () =>
        (await app.connection.jetstreamManager()).consumers.info('DELIVERY', 'delivery-workers'),
      (info) => info.num_pending === 0 && info.num_ack_pending === 0,
      { what: 'every job acknowledged', timeoutMs: 12_000 },
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

  it('gives each recipient its own outcome and retries only the deferred ones', async () => {
    const app = get();
    const domain = recipientDomain(app);
    const other = recipientDomain(app);
    const to = `accept-${unique('t')}@${domain}`;
    const cc = `reject-${unique('c')}@${domain}`;
    const bcc = `defer1-${unique('b')}@${domain}`;
    const elsewhere = `reject-${unique('e')}@${other}`;
    const view = registerMessage(app, sender, [to, cc, bcc, elsewhere]);
    await publishJob(app, view);

    const [first, second] = await app.events.waitFor(view.id, 2, 20_000);
    expect(first).toMatchObject({
      type: 'message.transient_error',
      data: { status: 'Deferred', recipient: to, attempt: { attempt: 1 } },
    });
    expect(
      first?.data.recipients.map((recipient) => [
        recipient.email,
        recipient.result,
        recipient.bounce_classification,
      ]),
    ).toEqual([
      [to, 'delivered', undefined],
      [cc, 'bounced', 'hard'],
      [bcc, 'transient_error', undefined],
      [elsewhere, 'bounced', 'hard'],
    ]);
    expect(first?.data.attempt.reply).toMatch(
      new RegExp(`^${to}: 250 .*; ${cc}, ${elsewhere}: 550 5\\.1\\.1 .*; ${bcc}: 451 4\\.3\\.0`),
    );
    // The retry is for bcc only; the message counts as delivered once anyone took it.
    expect(second).toMatchObject({
      type: 'message.delivered',
      data: { status: 'Delivered', attempt: { attempt: 2 } },
    });
    expect(second?.data.recipients.map((recipient) => [recipient.email, recipient.result])).toEqual(
      [[bcc, 'delivered']],
    );
    expect([to, cc, bcc, elsewhere].map((address) => app.sink.receiptsFor(address).length)).toEqual(
      [1, 0, 1, 0],
    );
    expect(
      (await attemptsOf(app, view.id)).map((attempt) => [attempt.delivered_to, attempt.bounced_to]),
    ).toEqual([
      [[to], [cc, elsewhere]],
      [[bcc], []],
    ]);
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

  it('aborts a session still running after the grace period when it stops, and hands its job back', async () => {
    const app = get();
    // A short grace period; a socket timeout and an attempt deadline longer than the server's
    // slowness.
    const rcptDelayMs = 8_000;
    const slowServer = {
      SHUTDOWN_GRACE_MS: '300',
      SMTP_SOCKET_TIMEOUT_MS: '20000',
      SMTP_ATTEMPT_TIMEOUT_MS: '20000',
    };
    await app.service.close();
    await app.startService(slowServer);
    try {
      const to = `slowrcpt${rcptDelayMs}-${unique('h')}@${recipientDomain(app)}`;
      const view = registerMessage(app, sender, [to]);
      const opened = app.service.pool.connectionsOpened;
      await publishJob(app, view);
      // The session is up; the sink answers its RCPT TO only after 8 s.
      await pollUntil(
        () => app.service.pool.connectionsOpened,
        (count) => count > opened,
        { what: 'the session to start' },
      );
      const stopping = Date.now();
      await app.service.close();
      // Aborted after the grace periods (0.3 s for the bus, 0.3 s for the sessions), not waited
      // for until the RCPT reply and the data: half the RCPT delay leaves a loaded machine room.
      expect(Date.now() - stopping).toBeLessThan(rcptDelayMs / 2);
      // Nothing was sent: the claim was given back, not recorded.
      expect(await attemptsOf(app, view.id)).toEqual([]);
      expect(app.sink.receiptsFor(to)).toHaveLength(0);

      await app.startService(slowServer);
      const [event] = await app.events.waitFor(view.id, 1, rcptDelayMs + 20_000);
      expect(event).toMatchObject({ type: 'message.delivered', data: { attempt: { attempt: 1 } } });
      expect(app.sink.receiptsFor(to)).toHaveLength(1);
    } finally {
      await app.service.close();
      await app.startService();
    }
  }, 90_000);

  describe('a connection dropped at each stage, or stalled (S8, S9)', () => {
    interface Stage {
      name: string;
      /** The sink's session mode, or `normal` with a scripted recipient. */
      mode: SessionMode;
      local: string;
      /** A message large enough that the drop lands mid-stream. */
      large?: boolean;
      /** The first attempt's reply. */
      reply: RegExp;
    }
    const stages: Stage[] = [
      {
        name: 'closed before the greeting',
        mode: 'drop-greeting',
        local: 'accept',
        reply: /ECONNECTION|closed/i,
      },
      {
        name: 'no greeting (silence until the greeting timeout)',
        mode: 'stall-greeting',
        local: 'accept',
        reply: /ETIMEDOUT|greeting/i,
      },
      { name: 'closed at MAIL FROM', mode: 'drop-mail', local: 'accept', reply: /closed/i },
      { name: 'closed at RCPT TO', mode: 'normal', local: 'droprcpt', reply: /closed/i },
      {
        name: 'closed in the middle of the data',
        mode: 'normal',
        local: 'dropmid',
        large: true,
        reply: /ECONNRESET|EPIPE|closed/i,
      },
      {
        name: 'closed after the data, without a reply',
        mode: 'normal',
        local: 'dropdata',
        reply: /closed/i,
      },
      {
        name: 'stalled after the data (socket timeout)',
        mode: 'normal',
        local: 'stall',
        reply: /ETIMEDOUT|timeout/i,
      },
    ];

    it.each(stages.map((stage, index) => [stage.name, stage, index] as const))(
      '%s: every attempt Deferred and retried on the schedule, then Failed; no socket left open',
      async (_name, stage, index) => {
        const app = get();
        // A sink of its own (its own loopback address, the port every sink shares): its
        // connections are this test's only.
        const sink = await SmtpSink.start(`127.0.0.${20 + index}`, app.port);
        try {
          sink.mode = stage.mode;
          const domain = recipientDomain(app, sink.host);
          const to = `${stage.local}-${unique('f')}@${domain}`;
          const view = registerMessage(app, sender, [to]);
          if (stage.large) {
            // About 300 KB of body: the sink drops the connection at its first chunk.
            const line = `${'x'.repeat(76)}\r\n`;
            const raw = Buffer.from(view.content_base64 ?? '', 'base64').toString('latin1');
            view.content_base64 = Buffer.from(raw + line.repeat(4_000), 'latin1').toString(
              'base64',
            );
          }
          await publishJob(app, view);

          const events = await app.events.waitFor(view.id, 3, 20_000);
          expect(events.map((event) => [event.type, event.data.status])).toEqual([
            ['message.transient_error', 'Deferred'],
            ['message.transient_error', 'Deferred'],
            ['message.failed', 'Failed'],
          ]);
          expect(events[0]?.data.attempt).toMatchObject({
            attempt: 1,
            remote_host: `mx.${domain}`,
          });
          expect(events[0]?.data.attempt.reply).toMatch(stage.reply);
          expect(events[2]?.data.attempt.reply).toMatch(/giving up: no retry left/);
          const attempts = await attemptsOf(app, view.id);
          expect(attempts.map((attempt) => [attempt.attempt, attempt.state])).toEqual([
            [1, 'done'],
            [2, 'done'],
            [3, 'done'],
          ]);
          // No attempt waited for a connection slot of the destination: every failed session
          // gave its slot back.
          for (const attempt of attempts) expect(attempt.reply).not.toMatch(/attempt timed out/);
          // One session per attempt (nothing was sent twice within an attempt), nothing received.
          expect(sink.connections).toBe(3);
          expect(sink.receipts).toHaveLength(0);
          // Every socket of those sessions is closed on both ends.
          await pollUntil(
            () => sink.openConnections(),
            (open) => open === 0,
            { what: 'the sink connections to close', timeoutMs: 5_000 },
          );
        } finally {
          await sink.stop();
        }
      },
      30_000,
    );
  });

  it('ends a session that outlives the attempt timeout as a transient failure', async () => {
    const app = get();
    // The server answers RCPT TO after 6 s, within the socket timeout but past the attempt's.
    const rcptDelayMs = 6_000;
    await app.service.close();
    await app.startService({
      SMTP_ATTEMPT_TIMEOUT_MS: '1000',
      SMTP_SOCKET_TIMEOUT_MS: '10000',
      SHUTDOWN_GRACE_MS: '300',
    });
    try {
      const to = `slowrcpt${rcptDelayMs}-${unique('t')}@${recipientDomain(app)}`;
      const view = registerMessage(app, sender, [to]);
      await publishJob(app, view);

      const events = await app.events.waitFor(view.id, 3, 20_000);
      expect(events.map((event) => [event.type, event.data.status])).toEqual([
        ['message.transient_error', 'Deferred'],
        ['message.transient_error', 'Deferred'],
        ['message.failed', 'Failed'],
      ]);
      expect(events[0]?.data.attempt.reply).toBe('attempt timed out after 1000 ms');
      // Each attempt ended at its deadline, not at the server's reply (half its delay leaves a
      // loaded machine room), well within its claim (lease).
      for (const attempt of await attemptsOf(app, view.id)) {
        const took = (attempt.finished_at ?? new Date()).getTime() - attempt.started_at.getTime();
        expect(took).toBeLessThan(rcptDelayMs / 2);
      }
      expect(app.sink.receiptsFor(to)).toHaveLength(0);
    } finally {
      await app.service.close();
      await app.startService();
    }
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
