import { randomUUID } from 'node:crypto';

import { type ListenerStreamAttachedEvent } from '@envoi/contracts-core';
import { RoutesErrorCode, RoutesSubjects, RouteStreamSubjects } from '@envoi/contracts-routes';
import { subscribeBroadcast } from '@envoi/shared-nats';
import { pollUntil } from '@envoi/shared-testing';

import { useRoutesTestRig } from './routes-test-rig';

/** Far beyond the test TTL of temporary routes: an attached listener keeps its route. */
const LEASE_MS = 20_000;
const ATTACHMENT = Buffer.from('the attachment bytes, never streamed');

/** A message with a text part and one attachment. */
function mailWithAttachment(to: string, subject: string): Buffer {
  return Buffer.from(
    [
      'From: Customer <customer@example.net>',
      `To: ${to}`,
      `Subject: ${subject}`,
      `Message-ID: <${randomUUID()}@example.net>`,
      'MIME-Version: 1.0',
      'Content-Type: multipart/mixed; boundary="b1"',
      '',
      '--b1',
      'Content-Type: text/plain; charset=utf-8',
      '',
      'See the attached file.',
      '--b1',
      'Content-Type: application/octet-stream; name="notes.bin"',
      'Content-Disposition: attachment; filename="notes.bin"',
      'Content-Transfer-Encoding: base64',
      '',
      ATTACHMENT.toString('base64'),
      '--b1--',
      '',
    ].join('\r\n'),
  );
}

/**
 * Route streams against the routes service from dist/, real PostgreSQL and NATS: temporary routes
 * for a pattern, routed mail buffered without attachment bytes, one listener at a time (409
 * unless forced), replay and acknowledgement, an existing route streamed while it keeps its
 * POSTs, the purge of idle temporary routes.
 */
describe('route streams', () => {
  const rig = useRoutesTestRig('routes_stream', {
    ROUTE_POLL_INTERVAL_MS: '20',
    ROUTE_PURGE_INTERVAL_MS: '100',
    ROUTE_STREAM_TEMPORARY_TTL_MS: '3000',
  });
  const rpc = () => rig().rpc();

  const attach = (accountId: string, routeId: string, sessionId: string, force = false) =>
    rpc().request(RouteStreamSubjects.attach, {
      account_id: accountId,
      target_id: routeId,
      session_id: sessionId,
      force,
      lease_ms: LEASE_MS,
    });
  const read = (routeId: string, sessionId: string) =>
    rpc().request(RouteStreamSubjects.read, {
      target_id: routeId,
      session_id: sessionId,
      after_seq: 0,
      limit: 100,
    });
  const ack = (routeId: string, sessionId: string, seq: number) =>
    rpc().request(RouteStreamSubjects.ack, {
      target_id: routeId,
      session_id: sessionId,
      seq,
      lease_ms: LEASE_MS,
    });

  /** A message for `address` taken by `routeId`, as the MX publishes it; answers its id. */
  async function mailTo(accountId: string, address: string, routeId: string, subject: string) {
    const raw = mailWithAttachment(address, subject);
    const event = await rig().receive(accountId, raw, [{ address, route_ids: [routeId] }]);
    return event.data.inbound_id;
  }

  it('refuses a recipient without a domain of the account, and both or neither target', async () => {
    const { accountId, domain } = await rig().accountWithDomain();
    const open = (query: { route_id?: string; recipient?: string }) =>
      rpc().request(RouteStreamSubjects.open, { account_id: accountId, ...query });
    await expect(open({ recipient: 'support' })).rejects.toMatchObject({
      code: RoutesErrorCode.InvalidRecipient,
    });
    await expect(open({ recipient: 'support@unknown.example.test' })).rejects.toMatchObject({
      code: RoutesErrorCode.DomainNotFound,
    });
    await expect(open({})).rejects.toMatchObject({ code: RoutesErrorCode.StreamTargetInvalid });
    await expect(
      open({ route_id: randomUUID(), recipient: `support@${domain}` }),
    ).rejects.toMatchObject({ code: RoutesErrorCode.StreamTargetInvalid });
    await expect(open({ route_id: randomUUID() })).rejects.toMatchObject({
      code: RoutesErrorCode.NotFound,
    });
    // A domain-scoped key of another domain may not open a stream for this one.
    await expect(
      rpc().request(RouteStreamSubjects.open, {
        account_id: accountId,
        recipient: `support@${domain}`,
        domains: ['other.example.test'],
      }),
    ).rejects.toMatchObject({ code: RoutesErrorCode.ScopeNotGranted });
  });

  it('buffers mail for a temporary route without attachment bytes, never lists it, replays and acknowledges', async () => {
    const { accountId, domain } = await rig().accountWithDomain();
    const opened = await rpc().request(RouteStreamSubjects.open, {
      account_id: accountId,
      recipient: `ticket-*@${domain}`,
    });
    const listed = await rpc().request(RoutesSubjects.list, {
      account_id: accountId,
      page: { limit: 100 },
    });
    expect(listed.data).toEqual([]);

    // A first listener leaves without acknowledging what was buffered.
    const first = randomUUID();
    await attach(accountId, opened.route_id, first);
    // Routes takes intake batches two at once: the second mail goes in once the first is
    // buffered, so that the buffer's order is theirs.
    const inboundIds = [await mailTo(accountId, `ticket-1@${domain}`, opened.route_id, 'first')];
    await pollUntil(
      () => read(opened.route_id, first),
      (page) => page.data.length === 1,
      { what: 'the first buffered event', timeoutMs: 15_000 },
    );
    inboundIds.push(await mailTo(accountId, `ticket-2@${domain}`, opened.route_id, 'second'));
    await pollUntil(
      () => read(opened.route_id, first),
      (page) => page.data.length === 2,
      { what: 'two buffered events', timeoutMs: 15_000 },
    );
    await rpc().request(RouteStreamSubjects.detach, {
      target_id: opened.route_id,
      session_id: first,
    });

    const session = randomUUID();
    const attached = await attach(accountId, opened.route_id, session);
    const page = await read(opened.route_id, session);
    expect(attached.replay_until_seq).toBe(page.data[1]?.seq);
    const payloads = page.data.map(
      (event) => JSON.parse(event.body) as { route_id: string; data: Record<string, unknown> },
    );
    expect(page.data.map((event) => event.event_type)).toEqual([
      'message.routing',
      'message.routing',
    ]);
    expect(payloads.map((payload) => payload.data['id'])).toEqual(inboundIds);
    expect(payloads[0]).toMatchObject({
      route_id: opened.route_id,
      data: {
        to: `ticket-1@${domain}`,
        subject: 'first',
        attachments: [
          {
            filename: 'notes.bin',
            content_type: 'application/octet-stream',
            disposition: 'attachment',
            size: ATTACHMENT.length,
          },
        ],
      },
    });
    expect(page.data[0]?.body).not.toContain(ATTACHMENT.toString('base64'));
    expect(page.data[0]?.body).not.toContain('"data":"');
    // A temporary route has no URL: no call is planned for it.
    const calls = await rig().db.query<unknown[]>(
      'SELECT 1 FROM routes.route_deliveries WHERE route_id = $1',
      [opened.route_id],
    );
    expect(calls).toHaveLength(0);

    expect(await ack(opened.route_id, session, page.data[0]?.seq ?? 0)).toEqual({ attached: true });
    const rest = await read(opened.route_id, session);
    expect(rest.data.map((event) => event.seq)).toEqual([page.data[1]?.seq]);
  });

  it('buffers a trigger’s sample for a temporary route, which has no URL to POST to', async () => {
    const { accountId, domain } = await rig().accountWithDomain();
    const { route_id: routeId } = await rpc().request(RouteStreamSubjects.open, {
      account_id: accountId,
      recipient: `sample@${domain}`,
    });
    const session = randomUUID();
    await attach(accountId, routeId, session);
    const answer = await rpc().request(RoutesSubjects.trigger, {
      account_id: accountId,
      route_id: routeId,
    });
    expect(answer.message).toContain('stream');
    const page = await read(routeId, session);
    expect(page.data.map((event) => event.event_type)).toEqual(['message.routing']);
    expect(JSON.parse(page.data[0]?.body ?? '{}')).toMatchObject({
      route_id: routeId,
      data: { to: `sample@${domain}` },
    });
  });

  it('refuses a second listener unless forced, and the replaced one learns it', async () => {
    const { accountId, domain } = await rig().accountWithDomain();
    const { route_id: routeId } = await rpc().request(RouteStreamSubjects.open, {
      account_id: accountId,
      recipient: `*@${domain}`,
    });
    const first = randomUUID();
    await attach(accountId, routeId, first);
    await expect(attach(accountId, routeId, randomUUID())).rejects.toMatchObject({
      code: RoutesErrorCode.StreamListenerAttached,
    });

    const announced: ListenerStreamAttachedEvent[] = [];
    const subscription = subscribeBroadcast(
      rig().nats,
      RouteStreamSubjects.attached,
      (event) => announced.push(event),
      () => undefined,
    );
    try {
      await rig().nats.flush();
      const second = randomUUID();
      await attach(accountId, routeId, second, true);
      await pollUntil(
        () => Promise.resolve(announced.filter((event) => event.target_id === routeId)),
        (events) => events.length > 0,
        { what: 'the attached broadcast', timeoutMs: 5_000 },
      );
      expect(announced.find((event) => event.target_id === routeId)?.session_id).toBe(second);
      expect(await ack(routeId, first, 0)).toEqual({ attached: false });
      await expect(read(routeId, first)).rejects.toMatchObject({
        code: RoutesErrorCode.StreamNotAttached,
      });
      expect(await ack(routeId, second, 0)).toEqual({ attached: true });
    } finally {
      subscription.unsubscribe();
    }
  });

  it('streams an existing route opened with route_id while its URL still gets the POST', async () => {
    const { accountId, domain } = await rig().accountWithDomain();
    const receiver = rig().receiver;
    const endpoint = `existing-${randomUUID()}`;
    const route = await rpc().request(RoutesSubjects.create, {
      account_id: accountId,
      body: { name: 'support', url: receiver.url(endpoint), recipient: `support@${domain}` },
    });
    await expect(
      rpc().request(RouteStreamSubjects.open, {
        account_id: accountId,
        route_id: route.id,
        domains: ['other.example.test'],
      }),
    ).rejects.toMatchObject({ code: RoutesErrorCode.NotFound });
    const opened = await rpc().request(RouteStreamSubjects.open, {
      account_id: accountId,
      route_id: route.id,
    });
    expect(opened).toEqual({ route_id: route.id });
    const session = randomUUID();
    await attach(accountId, route.id, session);
    await mailTo(accountId, `support@${domain}`, route.id, 'both ways');

    const page = await pollUntil(
      () => read(route.id, session),
      (buffered) => buffered.data.length === 1,
      { what: 'the buffered event', timeoutMs: 15_000 },
    );
    const payload = JSON.parse(page.data[0]?.body ?? '{}') as { data: { attachments: unknown[] } };
    // The route's own flags: attachments off, so none listed.
    expect(payload.data.attachments).toEqual([]);
    await pollUntil(
      () => Promise.resolve(receiver.callsTo(endpoint).length),
      (calls) => calls === 1,
      { what: 'the POST to the route URL', timeoutMs: 15_000 },
    );
    const listed = await rpc().request(RoutesSubjects.list, {
      account_id: accountId,
      page: { limit: 100 },
    });
    expect(listed.data.map((record) => record.id)).toEqual([route.id]);
  });

  it('purges a temporary route, its buffer with it, once it had no listener for the TTL', async () => {
    const { accountId, domain } = await rig().accountWithDomain();
    const { route_id: routeId } = await rpc().request(RouteStreamSubjects.open, {
      account_id: accountId,
      recipient: `support@${domain}`,
    });
    const session = randomUUID();
    await attach(accountId, routeId, session);
    await mailTo(accountId, `support@${domain}`, routeId, 'kept while attached');
    await rig().eventsHandled();
    expect((await read(routeId, session)).data).toHaveLength(1);
    await rpc().request(RouteStreamSubjects.detach, { target_id: routeId, session_id: session });

    await pollUntil(
      () => rig().db.query<unknown[]>('SELECT 1 FROM routes.routes WHERE id = $1', [routeId]),
      (rows) => rows.length === 0,
      { what: 'the idle temporary route purged', timeoutMs: 15_000 },
    );
    const buffered = await rig().db.query<unknown[]>(
      'SELECT 1 FROM routes.route_stream_events WHERE route_id = $1',
      [routeId],
    );
    expect(buffered).toHaveLength(0);
  });
});
