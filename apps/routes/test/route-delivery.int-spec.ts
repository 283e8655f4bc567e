import { createHash, randomBytes, randomUUID } from 'node:crypto';

import { EVENTS_STREAM } from '@envoi/contracts-core';
import { DomainsSubjects } from '@envoi/contracts-domains';
import {
  type CreatedRouteRecord,
  type CreateRouteBody,
  INBOUND_SPOOL_BUCKET,
  InboundStreamSubjects,
  type MessageRoutingPayload,
  type RouteDisabledEvent,
  type RoutedMailEvent,
  RoutesStreamSubjects,
  RoutesSubjects,
} from '@envoi/contracts-routes';
import { connectNats, putUpload, RpcClient, subscribeBroadcast } from '@envoi/shared-nats';
import {
  IsolatedPlatform,
  pollUntil,
  WebhookPayloadValidator,
  WebhookReceiver,
} from '@envoi/shared-testing';
import type { NatsConnection } from 'nats';
import { Webhook } from 'standardwebhooks';
import { DataSource } from 'typeorm';

import { routesDataSourceOptions } from '../src/database/data-source-options';
import { ROUTED_MAIL_DURABLE } from '../src/delivery/routed-mail.controller';

const SECRET_KEY = randomBytes(32).toString('hex');
const SPOOL_TTL_MS = 3_600_000;
const DAY_MS = 86_400_000;

function rawMessage(to: string): Buffer {
  return Buffer.from(
    [
      'From: Customer <customer@example.net>',
      `To: ${to}`,
      'Subject: Help with my account',
      `Message-ID: <${randomUUID()}@example.net>`,
      'Date: Mon, 06 May 2024 13:15:46 +0000',
      'Content-Type: text/plain; charset=utf-8',
      '',
      'I need help with my account settings.',
      '',
    ].join('\r\n'),
  );
}

/**
 * The route delivery engine against real PostgreSQL, NATS (the spool object store and the
 * EVENTS stream) and a loopback receiver: events.inbound.routed.v1 as the MX publishes it, then
 * signed POSTs on the route schedule (shortened by configuration).
 */
describe('route delivery', () => {
  let platform: IsolatedPlatform | undefined;
  let connection: NatsConnection | undefined;
  let receiver: WebhookReceiver | undefined;
  let dataSource: DataSource | undefined;
  const validator = new WebhookPayloadValidator();

  beforeAll(async () => {
    await IsolatedPlatform.build();
    platform = await IsolatedPlatform.start({ owner: 'routes_delivery' });
    await platform.startService('domains', platform.offlineDomainsEnv());
    await platform.startService(
      'routes',
      platform.env({
        ROUTE_SECRET_ENCRYPTION_KEY: SECRET_KEY,
        OUTBOUND_ALLOW_HTTP: 'true',
        OUTBOUND_ALLOW_CIDRS: '127.0.0.0/8',
        ROUTE_RETRY_BASE_MS: '10',
        ROUTE_MAX_ATTEMPTS: '4',
        ROUTE_DISABLE_AFTER_FAILURES: '3',
        ROUTE_POLL_INTERVAL_MS: '20',
        ROUTE_TIMEOUT_MS: '2000',
        ROUTE_ENDPOINT_CONCURRENCY: '2',
        ROUTE_LEASE_MS: '5000',
        ROUTE_PURGE_INTERVAL_MS: '100',
        ROUTE_MESSAGE_RETENTION_MS: String(DAY_MS),
      }),
    );
    connection = await connectNats({ servers: [platform.natsUrl], name: 'routes-delivery-test' });
    receiver = await WebhookReceiver.start();
    dataSource = await new DataSource(
      routesDataSourceOptions(platform.databaseUrl, 2),
    ).initialize();
  }, 120_000);

  afterAll(async () => {
    await dataSource?.destroy();
    await receiver?.close();
    await connection?.drain();
    await platform?.stop();
  });

  const nats = (): NatsConnection => {
    if (!connection) throw new Error('the bus is not connected');
    return connection;
  };
  const rpc = () => new RpcClient(nats(), 10_000);
  const loopback = (): WebhookReceiver => {
    if (!receiver) throw new Error('the receiver did not start');
    return receiver;
  };

  async function accountWithDomain(): Promise<{ accountId: string; domain: string }> {
    const accountId = randomUUID();
    const created = await rpc().request(DomainsSubjects.createDomain, {
      account_id: accountId,
      body: { domain: `d-${randomBytes(4).toString('hex')}.example.test` },
    });
    return { accountId, domain: created.domain };
  }

  function createRoute(
    accountId: string,
    endpoint: string,
    body: Partial<CreateRouteBody> = {},
  ): Promise<CreatedRouteRecord> {
    return rpc().request(RoutesSubjects.create, {
      account_id: accountId,
      body: { name: 'inbound', url: loopback().url(endpoint), recipient: '', ...body },
    });
  }

  /** A route of a new account taking `<local>@<its domain>`, and a message to that address. */
  async function oneRecipient(local: string) {
    const { accountId, domain } = await accountWithDomain();
    const endpoint = `${local}-${randomUUID()}`;
    const route = await createRoute(accountId, endpoint);
    const address = `${local}@${domain}`;
    const recipients = [{ address, route_ids: [route.id] }];
    return {
      accountId,
      endpoint,
      route,
      raw: rawMessage(address),
      inboundId: randomUUID(),
      recipients,
    };
  }

  /** What the MX does once it has the message: spool it, then publish the event. */
  async function receive(
    accountId: string,
    raw: Buffer,
    recipients: Array<{ address: string; route_ids: string[] }>,
  ): Promise<RoutedMailEvent> {
    const inboundId = randomUUID();
    const spool = await putUpload(nats(), INBOUND_SPOOL_BUCKET, inboundId, raw, SPOOL_TTL_MS);
    const event = routedEvent(accountId, inboundId, raw, recipients, spool);
    await publish(event);
    return event;
  }

  /** The MX's event of a message spooled (or to be spooled) as `spool`. */
  function routedEvent(
    accountId: string,
    inboundId: string,
    raw: Buffer,
    recipients: Array<{ address: string; route_ids: string[] }>,
    spool: RoutedMailEvent['data']['spool'],
    receivedAt = new Date(),
  ): RoutedMailEvent {
    return {
      id: randomUUID(),
      type: 'inbound.routed',
      timestamp: receivedAt.toISOString(),
      data: {
        inbound_id: inboundId,
        received_at: receivedAt.toISOString(),
        remote_address: '127.0.0.1',
        helo: 'client.example.net',
        tls: false,
        envelope_from: 'customer@example.net',
        size: raw.length,
        spool,
        account_id: accountId,
        recipients,
      },
    };
  }

  /** Publishes the event; answers its sequence in the stream. */
  async function publish(event: RoutedMailEvent): Promise<number> {
    const ack = await nats()
      .jetstream()
      .publish(InboundStreamSubjects.routed.name, JSON.stringify(event), { msgID: event.id });
    return ack.seq;
  }

  function verified(endpoint: string, secret: string): MessageRoutingPayload[] {
    return loopback()
      .callsTo(endpoint)
      .map((call) => {
        const payload = new Webhook(Buffer.from(secret, 'utf8'), { format: 'raw' }).verify(
          call.body,
          call.headers,
        ) as MessageRoutingPayload;
        expect(validator.violations('message.routing', payload)).toEqual([]);
        return payload;
      });
  }

  /** The deliveries of an inbound message, as stored. */
  function deliveriesOf(
    inboundId: string,
  ): Promise<Array<{ state: string; attempts: number; last_error: string | null }>> {
    if (!dataSource) throw new Error('the database is not connected');
    return dataSource.query(
      'SELECT state, attempts, last_error FROM routes.route_deliveries WHERE inbound_id = $1',
      [inboundId],
    );
  }

  /** Until the routes service has handled every routed event published so far. */
  async function eventsHandled(): Promise<void> {
    const jsm = await nats().jetstreamManager();
    await pollUntil(
      () => jsm.consumers.info(EVENTS_STREAM, ROUTED_MAIL_DURABLE),
      (info) => info.num_pending === 0 && info.num_ack_pending === 0,
      { what: 'the routed events handled', timeoutMs: 10_000 },
    );
  }

  /** The route.disabled events the routes service wrote to its outbox for a route. */
  function disabledNoticesOf(routeId: string): Promise<Array<{ payload: RouteDisabledEvent }>> {
    if (!dataSource) throw new Error('the database is not connected');
    return dataSource.query(
      `SELECT payload FROM routes.outbox WHERE subject = $1 AND payload->'data'->>'route_id' = $2`,
      [RoutesStreamSubjects.routeDisabled.name, routeId],
    );
  }

  async function routeOf(accountId: string, routeId: string) {
    return rpc().request(RoutesSubjects.get, { account_id: accountId, route_id: routeId });
  }

  it('POSTs one signed payload per recipient, or one per message when grouped, once', async () => {
    const { accountId, domain } = await accountWithDomain();
    const perRecipient = `each-${randomUUID()}`;
    const grouped = `grouped-${randomUUID()}`;
    const each = await createRoute(accountId, perRecipient);
    const group = await createRoute(accountId, grouped, { group_by_message_id: true });
    const [a, b] = [`a@${domain}`, `b@${domain}`];
    const event = await receive(accountId, rawMessage(`${a}, ${b}`), [
      { address: a, route_ids: [each.id, group.id] },
      { address: b, route_ids: [each.id, group.id] },
    ]);

    await pollUntil(
      () =>
        Promise.resolve(
          loopback().callsTo(perRecipient).length + loopback().callsTo(grouped).length,
        ),
      (calls) => calls >= 3,
      { what: 'three calls', timeoutMs: 15_000 },
    );
    const eachPayloads = verified(perRecipient, each.secret);
    expect(eachPayloads.map((payload) => payload.data.to).sort()).toEqual([a, b]);
    expect(eachPayloads[0]).toMatchObject({
      type: 'message.routing',
      route_id: each.id,
      data: {
        subject: 'Help with my account',
        plain_body: 'I need help with my account settings.\n',
      },
    });
    const [groupPayload] = verified(grouped, group.secret);
    expect(groupPayload).toMatchObject({ route_id: group.id, data: { to: a } });

    await pollUntil(
      () => routeOf(accountId, each.id),
      (route) => route.success_count === 2,
      { what: 'the counters', timeoutMs: 10_000 },
    );
    // The same event again, with another id (a second publication): nothing more is planned.
    await publish({ ...event, id: randomUUID() });
    await eventsHandled();
    expect(await deliveriesOf(event.data.inbound_id)).toHaveLength(3);
    await expect(routeOf(accountId, group.id)).resolves.toMatchObject({
      success_count: 1,
      error_count: 0,
    });
    expect(loopback().callsTo(perRecipient)).toHaveLength(2);
    expect(loopback().callsTo(grouped)).toHaveLength(1);
  });

  it('waits for the spool of a routed event stored before it, and keeps an old one whose spool is missing as a dead letter', async () => {
    const { accountId, endpoint, route, raw, inboundId, recipients } = await oneRecipient('early');
    const spool = {
      bucket: INBOUND_SPOOL_BUCKET,
      name: inboundId,
      size: raw.length,
      sha256: createHash('sha256').update(raw).digest('hex'),
    };
    await publish(routedEvent(accountId, inboundId, raw, recipients, spool));
    // Delivered again: the first take found no spool and handed the event back.
    const jsm = await nats().jetstreamManager();
    await pollUntil(
      () => jsm.consumers.info(EVENTS_STREAM, ROUTED_MAIL_DURABLE),
      (info) => info.num_redelivered > 0,
      { what: 'the event handed back', timeoutMs: 15_000 },
    );
    expect(loopback().callsTo(endpoint)).toHaveLength(0);
    await putUpload(nats(), INBOUND_SPOOL_BUCKET, inboundId, raw, SPOOL_TTL_MS);
    await pollUntil(
      () => Promise.resolve(loopback().callsTo(endpoint).length),
      (calls) => calls === 1,
      { what: 'the call once the spool is stored', timeoutMs: 20_000 },
    );
    expect(verified(endpoint, route.secret)[0]?.data.id).toBe(inboundId);

    const lateId = randomUUID();
    const receivedLongAgo = new Date(Date.now() - 2 * 60_000);
    await publish(
      routedEvent(accountId, lateId, raw, recipients, { ...spool, name: lateId }, receivedLongAgo),
    );
    await eventsHandled();
    expect(await deliveriesOf(lateId)).toHaveLength(0);
  });

  it('POSTs a routed message carried in its event (no spool)', async () => {
    const { accountId, endpoint, route, raw, inboundId, recipients } = await oneRecipient('inline');
    const event = routedEvent(accountId, inboundId, raw, recipients, undefined);
    await publish({ ...event, data: { ...event.data, raw: raw.toString('base64') } });
    await pollUntil(
      () => Promise.resolve(loopback().callsTo(endpoint).length),
      (calls) => calls === 1,
      { what: 'the call', timeoutMs: 15_000 },
    );
    const [payload] = verified(endpoint, route.secret);
    expect(payload?.data).toMatchObject({ id: inboundId, to: recipients[0]?.address });
  });

  it('retries a failing URL with the same webhook-id until it answers 2xx', async () => {
    const { accountId, domain } = await accountWithDomain();
    const endpoint = `flaky-${randomUUID()}`;
    loopback().behave(endpoint, (call) => (call < 2 ? 503 : 200));
    const route = await createRoute(accountId, endpoint);
    await receive(accountId, rawMessage(`x@${domain}`), [
      { address: `x@${domain}`, route_ids: [route.id] },
    ]);

    const settled = await pollUntil(
      () => routeOf(accountId, route.id),
      (record) => record.success_count === 1,
      { what: 'a success after two failures', timeoutMs: 15_000 },
    );
    expect(settled).toMatchObject({ error_count: 2, errors_since_last_success: 0 });
    const calls = loopback().callsTo(endpoint);
    expect(calls).toHaveLength(3);
    expect(new Set(calls.map((call) => call.headers['webhook-id'])).size).toBe(1);
  });

  it('gives up after the attempts and disables the route after consecutive failures', async () => {
    const { accountId, domain } = await accountWithDomain();
    const endpoint = `down-${randomUUID()}`;
    loopback().behave(endpoint, () => 503);
    const broadcasts: Array<string | null> = [];
    const subscription = subscribeBroadcast(
      nats(),
      RoutesSubjects.matchChanged,
      (change) => broadcasts.push(change.domain),
      () => undefined,
    );
    await nats().flush();
    const route = await createRoute(accountId, endpoint, { recipient: `*@${domain}` });
    const ofDomain = () => broadcasts.filter((changed) => changed === domain);
    // The MX replicas are told of the new route.
    await pollUntil(ofDomain, (changes) => changes.length === 1, { what: 'the creation told' });
    const event = await receive(accountId, rawMessage(`x@${domain}`), [
      { address: `x@${domain}`, route_ids: [route.id] },
    ]);

    const disabled = await pollUntil(
      () => routeOf(accountId, route.id),
      (record) => !record.enabled,
      { what: 'the route disabled', timeoutMs: 15_000 },
    );
    expect(disabled).toMatchObject({ error_count: 3, errors_since_last_success: 3 });
    // ... and of its disabling, which the MX takes at RCPT at once.
    await pollUntil(ofDomain, (changes) => changes.length === 2, { what: 'the disabling told' });
    subscription.unsubscribe();
    // Disabled: the delivery's remaining attempt is dropped, not made.
    const [dropped] = await pollUntil(
      () => deliveriesOf(event.data.inbound_id),
      (rows) => rows[0]?.state === 'given_up',
      { what: 'the delivery given up', timeoutMs: 10_000 },
    );
    expect(dropped).toMatchObject({ attempts: 4, last_error: 'the route was deleted or disabled' });
    await expect(
      rpc().request(RoutesSubjects.matchRecipient, { recipient: `x@${domain}` }),
    ).resolves.toEqual({ outcome: 'not_routed' });
    expect(loopback().callsTo(endpoint)).toHaveLength(3);
    const notices = await disabledNoticesOf(route.id);
    expect(notices).toHaveLength(1);
    expect(notices[0]?.payload).toMatchObject({
      type: 'route.disabled',
      data: {
        account_id: accountId,
        route_id: route.id,
        name: 'inbound',
        url: loopback().url(endpoint),
        consecutive_failures: 3,
        last_status: 503,
      },
    });
  });

  it('gives up a message the inbound-mail library refuses, with the reason, and keeps going', async () => {
    const { accountId, domain } = await accountWithDomain();
    const endpoint = `bomb-${randomUUID()}`;
    const route = await createRoute(accountId, endpoint);
    const nesting = Array.from(
      { length: 40 },
      (_, depth) => `Content-Type: multipart/mixed; boundary="b${depth}"\r\n\r\n--b${depth}`,
    ).join('\r\n');
    const bomb = Buffer.from(`From: x@example.net\r\nMIME-Version: 1.0\r\n${nesting}\r\n`);
    const refused = await receive(accountId, bomb, [
      { address: `x@${domain}`, route_ids: [route.id] },
    ]);
    const [given] = await pollUntil(
      () => deliveriesOf(refused.data.inbound_id),
      (rows) => rows[0]?.state === 'given_up',
      { what: 'the refused message given up', timeoutMs: 10_000 },
    );
    expect(given?.last_error).toMatch(/^message refused \(too_deep\): /);
    expect(loopback().callsTo(endpoint)).toHaveLength(0);

    const next = await receive(accountId, rawMessage(`x@${domain}`), [
      { address: `x@${domain}`, route_ids: [route.id] },
    ]);
    await pollUntil(
      () => deliveriesOf(next.data.inbound_id),
      (rows) => rows[0]?.state === 'delivered',
      { what: 'the next message delivered', timeoutMs: 10_000 },
    );
    expect(loopback().callsTo(endpoint)).toHaveLength(1);
  });

  it('holds a hanging route URL to ROUTE_ENDPOINT_CONCURRENCY calls, other routes unaffected', async () => {
    const { accountId, domain } = await accountWithDomain();
    const hanging = `hanging-${randomUUID()}`;
    const fast = `fast-${randomUUID()}`;
    loopback().behave(hanging, () => 'hang');
    const slow = await createRoute(accountId, hanging, { recipient: 'slow-*' });
    const quick = await createRoute(accountId, fast, { recipient: 'quick' });
    const slowRecipients = Array.from({ length: 6 }, (_, index) => `slow-${index}@${domain}`);
    await receive(
      accountId,
      rawMessage(slowRecipients.join(', ')),
      slowRecipients.map((address) => ({ address, route_ids: [slow.id] })),
    );
    await pollUntil(
      () => Promise.resolve(loopback().callsTo(hanging).length),
      (calls) => calls >= 2,
      { what: 'the hanging route called', timeoutMs: 10_000 },
    );
    await receive(accountId, rawMessage(`quick@${domain}`), [
      { address: `quick@${domain}`, route_ids: [quick.id] },
    ]);
    await pollUntil(
      () => Promise.resolve(loopback().callsTo(fast).length),
      (calls) => calls === 1,
      { what: 'the fast route called', timeoutMs: 10_000 },
    );
    // Called while the hanging route's calls still waited out ROUTE_TIMEOUT_MS.
    const [fastCall] = loopback().callsTo(fast);
    const firstGivenUp = Math.min(
      ...loopback()
        .callsTo(hanging)
        .map((call) => call.closedAt ?? Infinity),
    );
    expect(fastCall?.receivedAt).toBeLessThan(firstGivenUp);
    expect(loopback().peakOpen(hanging)).toBe(2);
  });

  it('makes a first call straight from the stream, then stores it with its result and counters', async () => {
    const { accountId, endpoint, route, raw, recipients } = await oneRecipient('direct');
    const event = await receive(accountId, raw, recipients);
    await eventsHandled();
    const [call] = loopback().callsTo(endpoint);
    if (!dataSource) throw new Error('the database is not connected');
    const [row] = await dataSource.query<
      Array<{ id: string; state: string; attempts: number; last_status: number; created_at: Date }>
    >(
      `SELECT id, state, attempts, last_status, created_at FROM routes.route_deliveries
       WHERE inbound_id = $1`,
      [event.data.inbound_id],
    );
    expect(row).toMatchObject({ state: 'delivered', attempts: 1, last_status: 200 });
    // Called before its delivery was stored, under the delivery's id.
    expect(call?.receivedAt).toBeLessThanOrEqual(row?.created_at.getTime() ?? 0);
    expect(call?.headers['webhook-id']).toBe(row?.id);
    await expect(routeOf(accountId, route.id)).resolves.toMatchObject({
      success_count: 1,
      error_count: 0,
    });
  });

  it('stores a first call that outlasts ROUTE_DIRECT_WAIT_MS leased, and records it when it ends', async () => {
    const { accountId, endpoint, route, raw, recipients } = await oneRecipient('late');
    // Past the intake's wait (ROUTE_DIRECT_WAIT_MS, 500 ms), within ROUTE_TIMEOUT_MS (2 s).
    loopback().behave(endpoint, () => ({ status: 200, afterMs: 1_500 }));
    const event = await receive(accountId, raw, recipients);
    // Stored leased while its call runs: were it stored due, a claim would call it again.
    await pollUntil(
      () => deliveriesOf(event.data.inbound_id),
      (rows) => rows[0]?.state === 'delivered',
      { what: 'the late call recorded', timeoutMs: 10_000 },
    );
    await eventsHandled();
    expect(await deliveriesOf(event.data.inbound_id)).toMatchObject([
      { state: 'delivered', attempts: 1 },
    ]);
    expect(loopback().callsTo(endpoint)).toHaveLength(1);
    await expect(routeOf(accountId, route.id)).resolves.toMatchObject({ success_count: 1 });
  });

  it('gives a call made again for the same message the same webhook-id', async () => {
    const { accountId, endpoint, raw, recipients } = await oneRecipient('again');
    const inboundId = randomUUID();
    const event = routedEvent(accountId, inboundId, raw, recipients, undefined);
    const eventWithBytes = { ...event, data: { ...event.data, raw: raw.toString('base64') } };
    await publish(eventWithBytes);
    await eventsHandled();
    // As after a crash between a call and its record: the message taken again, nothing stored.
    if (!dataSource) throw new Error('the database is not connected');
    await dataSource.query(`DELETE FROM routes.inbound_messages WHERE id = $1`, [inboundId]);
    await publish({ ...eventWithBytes, id: randomUUID() });
    await pollUntil(
      () => Promise.resolve(loopback().callsTo(endpoint).length),
      (calls) => calls === 2,
      { what: 'the call made again', timeoutMs: 10_000 },
    );
    const [first, second] = loopback().callsTo(endpoint);
    expect(second?.headers['webhook-id']).toBe(first?.headers['webhook-id']);
  });

  it('purges a routed message once its calls are settled and old, never one with a pending call', async () => {
    const { accountId, domain } = await accountWithDomain();
    const endpoint = `purged-${randomUUID()}`;
    const route = await createRoute(accountId, endpoint);
    const settled = await receive(accountId, rawMessage(`x@${domain}`), [
      { address: `x@${domain}`, route_ids: [route.id] },
    ]);
    await pollUntil(
      () => deliveriesOf(settled.data.inbound_id),
      (rows) => rows[0]?.state === 'delivered',
      { what: 'the call made', timeoutMs: 10_000 },
    );
    if (!dataSource) throw new Error('the database is not connected');
    const pendingId = randomUUID();
    // One statement, as the intake plans them: a purge never sees the old message without its call.
    await dataSource.query(
      `WITH message AS (
         INSERT INTO routes.inbound_messages (id, account_id, received_at, raw, created_at)
         VALUES ($1, $2, now(), 'x', now() - interval '2 days') RETURNING id
       )
       INSERT INTO routes.route_deliveries (id, route_id, inbound_id, recipients, next_attempt_at)
       SELECT $3, $4, message.id, '{x}', now() + interval '1 day' FROM message`,
      [pendingId, accountId, randomUUID(), route.id],
    );
    await dataSource.query(
      `UPDATE routes.inbound_messages SET created_at = now() - interval '2 days' WHERE id = $1`,
      [settled.data.inbound_id],
    );
    await dataSource.query(
      `UPDATE routes.route_deliveries SET updated_at = now() - interval '2 days'
       WHERE inbound_id = $1`,
      [settled.data.inbound_id],
    );

    await pollUntil(
      () => deliveriesOf(settled.data.inbound_id),
      (rows) => rows.length === 0,
      { what: 'the settled message purged', timeoutMs: 10_000 },
    );
    const kept = await dataSource.query<unknown[]>(
      'SELECT 1 FROM routes.inbound_messages WHERE id = $1',
      [pendingId],
    );
    expect(kept).toHaveLength(1);
  });
});
