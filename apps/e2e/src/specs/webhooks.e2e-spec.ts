import { randomUUID } from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';

import type { DomainRecord } from '@envoi/contracts-domains';
import type { CreateMessageResult } from '@envoi/contracts-messages';
import {
  type CreatedWebhookRecord,
  WEBHOOK_EVENT_FLAGS,
  type WebhookEventFlag,
  type WebhookRecord,
} from '@envoi/contracts-webhooks';
import { pollUntil } from '@envoi/shared-testing';
import { simpleParser } from 'mailparser';
import { Client } from 'pg';

import {
  type AccountSession,
  closeSessions,
  createAccountSession,
} from '../support/account-session';
import { request } from '../support/api-client';
import { publishDns } from '../support/dns-zone';
import { createVerifiedDomain } from '../support/domains';
import { e2eEnvironment } from '../support/environment';
import { OutagePlatform } from '../support/outage-platform';
import { receiptsFor } from '../support/smtp-receipts';
import { type CheckedCall, CheckedWebhookReceiver } from '../support/webhook-receiver';

const IN_A_MONTH = (): string => new Date(Date.now() + 30 * 86_400_000).toISOString();
const EVERY_FLAG = Object.fromEntries(WEBHOOK_EVENT_FLAGS.map((flag) => [flag, true]));

function flagsOnly(...on: WebhookEventFlag[]): Record<WebhookEventFlag, boolean> {
  return Object.fromEntries(WEBHOOK_EVENT_FLAGS.map((flag) => [flag, on.includes(flag)])) as Record<
    WebhookEventFlag,
    boolean
  >;
}

/** What an event is about, to compare with what was produced: `type recipient-or-domain`. */
function label(call: CheckedCall): string {
  const data = call.payload?.data ?? {};
  const subject = data['recipient'] ?? data['domain'];
  return `${call.payload?.type ?? '?'} ${typeof subject === 'string' ? subject : '?'}`;
}

/** An address nothing listens on: a call to it is refused. */
async function refusingUrl(): Promise<string> {
  const server = http.createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return `http://127.0.0.1:${port}/refused`;
}

/**
 * Issue 15 end to end: mail sent through the API to the loopback sinks, tracking, suppressions
 * and a broken domain produce every event type; a loopback receiver checks each call against
 * webhooks.yaml, verifies its Standard Webhooks signature and de-duplicates on `webhook-id`.
 */
describe('webhooks end to end (issue 15)', () => {
  let receiver: CheckedWebhookReceiver;

  beforeAll(async () => {
    receiver = await CheckedWebhookReceiver.start();
  });

  afterAll(async () => {
    await receiver.close();
    await closeSessions();
  });

  afterEach(() => {
    expect(receiver.problems()).toEqual([]);
  });

  async function createWebhook(
    session: AccountSession,
    endpoint: string,
    body: Record<string, unknown>,
    url = receiver.url(endpoint),
  ): Promise<CreatedWebhookRecord> {
    const response = await session.api.post<CreatedWebhookRecord>(session.path('/webhooks'), {
      name: endpoint,
      url,
      scope: 'global',
      ...body,
    });
    if (response.status !== 201) throw new Error(`webhook creation failed: ${response.text}`);
    receiver.serve(endpoint, response.body);
    return response.body;
  }

  async function suppress(session: AccountSession, email: string, domain?: string): Promise<void> {
    const response = await session.api.post(session.path('/suppressions'), {
      email,
      expires_at: IN_A_MONTH(),
      ...(domain ? { domain } : {}),
    });
    expect(response.status).toBe(201);
  }

  async function webhook(session: AccountSession, id: string): Promise<WebhookRecord> {
    const response = await session.api.get<WebhookRecord>(session.path(`/webhooks/${id}`));
    expect(response.status).toBe(200);
    return response.body;
  }

  describe('every event type', () => {
    let session: AccountSession;
    let domain: DomainRecord;
    let otherDomain: DomainRecord;

    beforeAll(async () => {
      session = await createAccountSession();
      domain = await createVerifiedDomain(session);
      otherDomain = await createVerifiedDomain(session);
      await createWebhook(session, 'all', EVERY_FLAG);
      await createWebhook(session, 'scoped', {
        ...EVERY_FLAG,
        scope: 'scoped',
        domains: [domain.domain],
      });
      await createWebhook(
        session,
        'partial',
        flagsOnly('on_delivered', 'on_bounced', 'on_dns_error'),
      );
      await createWebhook(session, 'disabled', { ...EVERY_FLAG, enabled: false });
      await createWebhook(await createAccountSession(), 'stranger', EVERY_FLAG);
    });

    async function send(
      from: DomainRecord,
      to: string,
      extra: Record<string, unknown> = {},
    ): Promise<void> {
      const response = await session.api.post<CreateMessageResult>(session.path('/messages'), {
        from: { email: `app@${from.domain}` },
        recipients: [{ email: to }],
        subject: 'Webhook events',
        text_content: 'Hello',
        ...extra,
      });
      expect(response.status).toBe(202);
    }

    /** Delivers tracked mail to `to`, then opens it and follows its one tracked link. */
    async function openAndClick(to: string): Promise<void> {
      await send(domain, to, {
        html_content: '<html><body><a href="https://example.com/landing">landing</a></body></html>',
        tracking: { open: true, click: true },
      });
      const [receipt] = await pollUntil(
        () => receiptsFor(to),
        (found) => found.length > 0,
        { timeoutMs: 20_000, what: `the message to ${to} in the sink` },
      );
      const parsed = await simpleParser(receipt?.raw ?? '');
      const html = typeof parsed.html === 'string' ? parsed.html : '';
      const pixel = /<img src="([^"]+\/t\/o\/[A-Za-z0-9_-]+)"/.exec(html)?.[1];
      const link = /href="([^"]+\/t\/c\/[A-Za-z0-9_-]+)"/.exec(html)?.[1];
      for (const url of [pixel, link]) {
        if (!url) throw new Error(`no tracking URL in ${html}`);
        // A tracking route of the gateway, not an API operation: outside the contract.
        const visited = await request('GET', new URL(url).pathname, {
          contract: 'skip',
          headers: { 'user-agent': 'Mozilla/5.0 (e2e)' },
        });
        expect([200, 302]).toContain(visited.status);
      }
    }

    /** Removes every record of the verified domain and checks it: valid → invalid. */
    async function breakDns(broken: DomainRecord): Promise<void> {
      await publishDns(Object.fromEntries(broken.dns_records.map((record) => [record.host, []])));
      const checked = await session.api.post<DomainRecord>(
        session.path(`/domains/${broken.domain}/check-dns`),
      );
      expect(checked.body.dns_valid).toBe(false);
    }

    function waitForEvents(endpoint: string, expected: string[]): Promise<string[]> {
      return pollUntil(
        () => receiver.eventsAt(endpoint).map(label).sort(),
        (labels) => expected.every((wanted) => labels.includes(wanted)),
        { timeoutMs: 60_000, what: `${expected.length} events at ${endpoint}` },
      );
    }

    it('sends each event once to every subscribed endpoint, signed and valid, none to others', async () => {
      const tag = randomUUID().slice(0, 8);
      const delivered = `ok-${tag}@example.net`;
      const deferred = `defer1-${tag}@example.net`;
      const bounced = `reject-${tag}@example.net`;
      const suppressed = `suppressed-${tag}@example.net`;
      const tracked = `tracked-${tag}@example.net`;
      const elsewhere = `elsewhere-${tag}@example.net`;

      await send(domain, delivered);
      await send(domain, deferred);
      await send(domain, bounced);
      await suppress(session, suppressed, domain.domain);
      await send(domain, suppressed);
      await openAndClick(tracked);
      await send(otherDomain, elsewhere);
      const accepted = [delivered, deferred, bounced, tracked].map(
        (to) => `message.reception ${to}`,
      );
      const ofDomain = [
        ...accepted,
        `message.delivered ${delivered}`,
        `message.transient_error ${deferred}`,
        `message.delivered ${deferred}`,
        `message.bounced ${bounced}`,
        `suppression.created ${bounced}`,
        `suppression.created ${suppressed}`,
        `message.suppressed ${suppressed}`,
        `message.delivered ${tracked}`,
        `message.opened ${tracked}`,
        `message.clicked ${tracked}`,
      ];
      const ofOtherDomain = [`message.reception ${elsewhere}`, `message.delivered ${elsewhere}`];
      await waitForEvents('all', [...ofDomain, ...ofOtherDomain]);
      // The mail events are in: the domain's records may break now.
      await breakDns(domain);
      const dnsError = `domain.dns_error ${domain.domain}`;

      const expected = {
        all: [...ofDomain, ...ofOtherDomain, dnsError],
        scoped: [...ofDomain, dnsError],
        partial: [
          `message.delivered ${delivered}`,
          `message.delivered ${deferred}`,
          `message.bounced ${bounced}`,
          `message.delivered ${tracked}`,
          `message.delivered ${elsewhere}`,
          dnsError,
        ],
      };
      for (const [endpoint, labels] of Object.entries(expected)) {
        expect({ endpoint, labels: await waitForEvents(endpoint, labels) }).toEqual({
          endpoint,
          labels: [...labels].sort(),
        });
      }
      expect(receiver.callsTo('disabled')).toEqual([]);
      expect(receiver.callsTo('stranger')).toEqual([]);
    }, 180_000);
  });

  describe('faults of the endpoint', () => {
    let session: AccountSession;

    beforeEach(async () => {
      session = await createAccountSession();
    });

    async function suppressOne(): Promise<void> {
      await suppress(session, `fault-${randomUUID().slice(0, 8)}@example.net`);
    }

    function callsAt(endpoint: string, count: number): Promise<CheckedCall[]> {
      return pollUntil(
        () => receiver.callsTo(endpoint),
        (calls) => calls.length >= count,
        { timeoutMs: 30_000, what: `${count} calls at ${endpoint}` },
      );
    }

    function counters(record: WebhookRecord) {
      const { enabled, success_count, error_count, errors_since_last_success } = record;
      return { enabled, success_count, error_count, errors_since_last_success };
    }

    it('retries a 503 with the same webhook-id and counts both calls', async () => {
      receiver.behave('flaky', (call) => (call === 0 ? 503 : 200));
      const created = await createWebhook(session, 'flaky', flagsOnly('on_suppression_created'));
      await suppressOne();

      const calls = await callsAt('flaky', 2);
      expect(calls).toHaveLength(2);
      expect(calls[1]?.messageId).toBe(calls[0]?.messageId);
      const record = await pollUntil(
        () => webhook(session, created.id),
        (found) => found.success_count === 1,
        { what: 'the success to be counted' },
      );
      expect(counters(record)).toEqual({
        enabled: true,
        success_count: 1,
        error_count: 1,
        errors_since_last_success: 0,
      });
      expect(record.last_request_at).not.toBeNull();
    });

    it('gives up on a call that hangs at the timeout and retries it', async () => {
      receiver.behave('hang', (call) => (call === 0 ? 'hang' : 200));
      const created = await createWebhook(session, 'hang', flagsOnly('on_suppression_created'));
      await suppressOne();

      const [first, second] = await callsAt('hang', 2);
      expect(second?.messageId).toBe(first?.messageId);
      // WEBHOOK_TIMEOUT_MS is 2000 on the e2e platform.
      expect((second?.receivedAt ?? 0) - (first?.receivedAt ?? 0)).toBeGreaterThanOrEqual(1_900);
      const record = await pollUntil(
        () => webhook(session, created.id),
        (found) => found.success_count === 1,
        { what: 'the success to be counted' },
      );
      expect(counters(record)).toMatchObject({ success_count: 1, error_count: 1 });
    });

    it('retries a refused endpoint on schedule, then gives the delivery up', async () => {
      const created = await createWebhook(
        session,
        'refused',
        flagsOnly('on_suppression_created'),
        await refusingUrl(),
      );
      await suppressOne();

      const record = await pollUntil(
        () => webhook(session, created.id),
        (found) => found.error_count >= 6,
        { timeoutMs: 40_000, what: 'six failed attempts' },
      );
      expect(counters(record)).toEqual({
        enabled: true,
        success_count: 0,
        error_count: 6,
        errors_since_last_success: 6,
      });
      const database = new Client({
        connectionString: e2eEnvironment().serviceEnv['DATABASE_URL'],
      });
      await database.connect();
      try {
        const { rows } = await database.query<{ state: string; attempts: number }>(
          'SELECT state, attempts FROM webhooks.webhook_deliveries WHERE webhook_id = $1',
          [created.id],
        );
        expect(rows).toEqual([{ state: 'given_up', attempts: 6 }]);
      } finally {
        await database.end();
      }
    });

    it('disables the webhook at once on 410 Gone', async () => {
      receiver.behave('gone', () => 410);
      const created = await createWebhook(session, 'gone', flagsOnly('on_suppression_created'));
      await suppressOne();

      const record = await pollUntil(
        () => webhook(session, created.id),
        (found) => !found.enabled,
        { what: 'the webhook to be disabled' },
      );
      expect(counters(record)).toEqual({
        enabled: false,
        success_count: 0,
        error_count: 1,
        errors_since_last_success: 1,
      });
      expect(receiver.callsTo('gone')).toHaveLength(1);
    });
  });

  describe('the webhooks service killed mid-burst', () => {
    const BURST = 60;
    const KILL_AFTER_EVENTS = 10;
    let outage: OutagePlatform | undefined;

    beforeAll(async () => {
      outage = await OutagePlatform.start();
    }, 180_000);

    afterAll(async () => {
      await outage?.stop();
    }, 120_000);

    it('loses no event', async () => {
      if (!outage) throw new Error('the outage platform did not start');
      const session = await outage.createAccountSession(`e2e-webhooks-${randomUUID().slice(0, 8)}`);
      await createWebhook(session, 'burst', flagsOnly('on_suppression_created'));
      const emails = Array.from(
        { length: BURST },
        (_, index) => `burst-${index}-${randomUUID().slice(0, 8)}@example.net`,
      );
      const burst = (async () => {
        for (const email of emails) await suppress(session, email);
      })();

      await pollUntil(
        () => receiver.eventsAt('burst').length,
        (received) => received >= KILL_AFTER_EVENTS,
        { timeoutMs: 30_000, what: `${KILL_AFTER_EVENTS} events before the kill` },
      );
      await outage.killService('webhooks');
      const beforeRestart = receiver.eventsAt('burst').length;
      await burst;
      expect(beforeRestart).toBeLessThan(BURST);
      await outage.startServiceAgain('webhooks');

      const received = await pollUntil(
        () => receiver.eventsAt('burst').map(label).sort(),
        (labels) => labels.length >= BURST,
        { timeoutMs: 60_000, what: `all ${BURST} events at the endpoint` },
      );
      expect(received).toEqual(emails.map((email) => `suppression.created ${email}`).sort());
      const calls = receiver.callsTo('burst').length;
      console.log(
        `webhooks e2e kill -9: ${BURST} events, ${beforeRestart} received before the kill, ` +
          `lost ${BURST - received.length}, duplicate calls ${calls - received.length}`,
      );
    }, 180_000);
  });
});
