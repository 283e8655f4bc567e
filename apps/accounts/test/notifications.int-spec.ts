import { randomUUID } from 'node:crypto';

import { AccountsSubjects, type MemberRole } from '@envoi/contracts-accounts';
import { EVENTS_STREAM } from '@envoi/contracts-core';
import { type RouteDisabledEvent, RoutesStreamSubjects } from '@envoi/contracts-routes';
import { type WebhookDisabledEvent, WebhooksStreamSubjects } from '@envoi/contracts-webhooks';
// The conventions let apps' tests use type:testing libs; eslint.config.mjs does not yet.
import { findFreePort, pollUntil, SmtpSink } from '@envoi/shared-testing';
import { simpleParser } from 'mailparser';

import {
  IP_ALLOW_LIST_CHANGED_DURABLE,
  ROUTE_DISABLED_DURABLE,
  WEBHOOK_DISABLED_DURABLE,
} from '../src/notifications/notification-events.controller';
import { type AccountsTestApp, startAccountsService } from './accounts-test-app';

/**
 * Notifications end to end inside the accounts service: the events on the real EVENTS stream,
 * the members in the real database, the mail through a real smtp-server smarthost on loopback.
 */
describe('notifications', () => {
  let app: AccountsTestApp | undefined;
  let sink: SmtpSink | undefined;

  beforeAll(async () => {
    const port = await findFreePort();
    sink = await SmtpSink.start('127.0.0.1', port, false);
    app = await startAccountsService({
      NOTIFICATIONS_SMTP_URL: `smtp://127.0.0.1:${port}`,
      NOTIFICATIONS_FROM: 'Envoi <no-reply@envoi.test>',
      NOTIFICATIONS_DASHBOARD_URL: 'https://dashboard.envoi.test',
      NOTIFICATIONS_SMTP_TIMEOUT_MS: '5000',
      NOTIFICATIONS_RETRY_MS: '100',
      NOTIFICATIONS_MAX_ATTEMPTS: '5',
      OUTBOX_RELAY_INTERVAL_MS: '50',
    });
  }, 90_000);

  afterAll(async () => {
    await app?.close();
    await sink?.stop();
  }, 30_000);

  const getApp = (): AccountsTestApp => {
    if (!app) throw new Error('the accounts service did not start');
    return app;
  };
  const getSink = (): SmtpSink => {
    if (!sink) throw new Error('the smarthost did not start');
    return sink;
  };

  /** An account whose owner and members have these addresses (lowercase, unique per test). */
  async function accountWith(
    owner: string,
    members: ReadonlyArray<{ email: string; role: MemberRole }>,
  ): Promise<string> {
    const { account } = await getApp().createAccount({ owner_email: owner });
    for (const member of members) {
      await getApp().rpc.request(AccountsSubjects.addMember, {
        account_id: account.id,
        member: { email: member.email, role: member.role },
      });
    }
    return account.id;
  }

  interface Notice {
    rcptTo: string[];
    mailFrom: string;
    subject: string;
    text: string;
  }

  /** Every message the smarthost took, decoded. */
  async function notices(): Promise<Notice[]> {
    return Promise.all(
      getSink().receipts.map(async (receipt) => {
        const parsed = await simpleParser(receipt.raw);
        return {
          rcptTo: [...receipt.rcptTo].sort(),
          mailFrom: receipt.mailFrom,
          subject: parsed.subject ?? '',
          text: parsed.text ?? '',
        };
      }),
    );
  }

  /** The messages whose subject has `about`, once there are `count` of them. */
  async function noticesAbout(about: string, count: number): Promise<Notice[]> {
    const matching = async () =>
      (await notices()).filter((notice) => notice.subject.includes(about));
    return pollUntil(matching, (found) => found.length >= count, {
      timeoutMs: 20_000,
      what: `${count} notification(s) about "${about}"`,
    });
  }

  /** Waits until the durable has acknowledged everything on the stream so far. */
  async function consumedAll(durable: string): Promise<void> {
    const jsm = await getApp().connection.jetstreamManager();
    const last = (await jsm.streams.info(EVENTS_STREAM)).state.last_seq;
    await pollUntil(
      () => jsm.consumers.info(EVENTS_STREAM, durable),
      (info) => info.ack_floor.stream_seq >= last && info.num_pending === 0,
      { timeoutMs: 20_000, what: `${durable} to acknowledge #${last}` },
    );
  }

  const unique = (prefix: string): string =>
    `${prefix}-${randomUUID().slice(0, 8)}@example.net`.toLowerCase();

  it('mails the owners and administrators, not the other members, when an allow list is set and changed', async () => {
    const owner = unique('owner');
    const admin = unique('admin');
    const developer = unique('developer');
    const accountId = await accountWith(owner, [
      { email: admin, role: 'Administrator' },
      { email: developer, role: 'Developer' },
    ]);
    const label = `Key ${randomUUID()}`;
    const key = await getApp().rpc.request(AccountsSubjects.createApiKey, {
      account_id: accountId,
      key: { label, scopes: ['messages:send:all'], ip_allow_list: ['192.0.2.0/24'] },
    });

    const [created] = await noticesAbout(label, 1);
    expect(created?.rcptTo).toEqual([admin, owner].sort());
    expect(created?.mailFrom).toBe('no-reply@envoi.test');
    const createdText = created?.text ?? '';
    expect(createdText).toContain('Previous list: none (any address may use the key)');
    expect(createdText).toContain('New list: 192.0.2.0/24');
    expect(createdText).not.toContain(developer);

    // A label change alone tells nobody; the list's change does, with who made it from where.
    await getApp().rpc.request(AccountsSubjects.updateApiKey, {
      account_id: accountId,
      key_id: key.id,
      changes: { label: `${label} renamed` },
    });
    await getApp().rpc.request(AccountsSubjects.updateApiKey, {
      account_id: accountId,
      key_id: key.id,
      changes: { ip_allow_list: ['192.0.2.0/24', '2001:db8::/32'] },
      caller: { key_id: key.id, ip: '192.0.2.9' },
    });
    const [, changed] = await noticesAbout(label, 2);
    const changedText = changed?.text ?? '';
    expect(changed?.rcptTo).toEqual([admin, owner].sort());
    expect(changedText).toContain('Previous list: 192.0.2.0/24');
    expect(changedText).toContain('New list: 192.0.2.0/24, 2001:db8::/32');
    expect(changedText).toContain(`Changed by: API key ${key.id} from 192.0.2.9`);

    await consumedAll(IP_ALLOW_LIST_CHANGED_DURABLE);
    expect(await noticesAbout(label, 2)).toHaveLength(2);
  });

  it('mails every member when a webhook is disabled, trying again after the smarthost answers 451', async () => {
    // The sink answers 451 to the first RCPT of each defer1- address: no one is taken at first.
    const owner = unique('defer1-owner');
    const analyst = unique('defer1-analyst');
    const accountId = await accountWith(owner, [{ email: analyst, role: 'Analyst' }]);
    const otherAccountOwner = unique('other');
    await accountWith(otherAccountOwner, []);
    const webhookName = `Hook ${randomUUID()}`;
    const event: WebhookDisabledEvent = {
      id: randomUUID(),
      type: 'webhook.disabled',
      timestamp: new Date().toISOString(),
      data: {
        account_id: accountId,
        webhook_id: randomUUID(),
        name: webhookName,
        url: 'https://hooks.example.com/envoi',
        reason: 'gone',
        consecutive_failures: 1,
        last_status: 410,
        disabled_at: new Date().toISOString(),
      },
    };
    const connectionsBefore = getSink().connections;
    await getApp()
      .connection.jetstream()
      .publish(
        WebhooksStreamSubjects.webhookDisabled.name,
        new TextEncoder().encode(JSON.stringify(event)),
        { msgID: event.id },
      );

    const [notice] = await noticesAbout(webhookName, 1);
    expect(notice?.rcptTo).toEqual([analyst, owner].sort());
    const text = notice?.text ?? '';
    expect(text).toContain('its endpoint answered 410 Gone');
    expect(text).toContain(`https://dashboard.envoi.test/webhooks/${event.data.webhook_id}`);
    // Refused once (451 for both), then taken: at least two sessions.
    expect(getSink().connections - connectionsBefore).toBeGreaterThanOrEqual(2);
    await consumedAll(WEBHOOK_DISABLED_DURABLE);
    expect(getSink().receiptsFor(otherAccountOwner)).toEqual([]);
    const dead = await getApp().dataSource.query<unknown[]>(
      `SELECT id FROM accounts.dead_letters WHERE durable = $1`,
      [WEBHOOK_DISABLED_DURABLE],
    );
    expect(dead).toEqual([]);
  });

  it('mails every member of the account when a route is disabled', async () => {
    const owner = unique('route-owner');
    const developer = unique('route-developer');
    const accountId = await accountWith(owner, [{ email: developer, role: 'Developer' }]);
    const routeName = `Route ${randomUUID()}`;
    const event: RouteDisabledEvent = {
      id: randomUUID(),
      type: 'route.disabled',
      timestamp: new Date().toISOString(),
      data: {
        account_id: accountId,
        route_id: randomUUID(),
        name: routeName,
        url: 'https://inbound.example.com/envoi',
        consecutive_failures: 100,
        last_status: 503,
        disabled_at: new Date().toISOString(),
      },
    };
    await getApp()
      .connection.jetstream()
      .publish(
        RoutesStreamSubjects.routeDisabled.name,
        new TextEncoder().encode(JSON.stringify(event)),
        { msgID: event.id },
      );

    const [notice] = await noticesAbout(routeName, 1);
    expect(notice?.rcptTo).toEqual([developer, owner].sort());
    expect(notice?.text).toContain('its URL failed 100 consecutive times');
    expect(notice?.text).toContain(`https://dashboard.envoi.test/routes/${event.data.route_id}`);
    await consumedAll(ROUTE_DISABLED_DURABLE);
    expect(await noticesAbout(routeName, 1)).toHaveLength(1);
  });
});
