import { randomUUID } from 'node:crypto';

import type { MemberRole } from '@envoi/contracts-accounts';
import { type CreatedWebhookRecord, WEBHOOK_EVENT_FLAGS } from '@envoi/contracts-webhooks';
import { pollUntil } from '@envoi/shared-testing';
import { simpleParser } from 'mailparser';

import {
  type AccountSession,
  closeSessions,
  createAccountSession,
  createKey,
} from '../support/account-session';
import { notificationsFor, type StoredReceipt } from '../support/smtp-receipts';
import { CheckedWebhookReceiver } from '../support/webhook-receiver';

interface Notice {
  rcptTo: string[];
  subject: string;
  text: string;
}

async function decoded(receipt: StoredReceipt): Promise<Notice> {
  const parsed = await simpleParser(receipt.raw);
  return {
    rcptTo: [...receipt.rcptTo].sort(),
    subject: parsed.subject ?? '',
    text: parsed.text ?? '',
  };
}

/** The notifications `recipient` got that name `about`, once there are `count` of them. */
async function noticesAbout(recipient: string, about: string, count: number): Promise<Notice[]> {
  return pollUntil(
    async () =>
      (await Promise.all(notificationsFor(recipient).map(decoded))).filter((notice) =>
        notice.text.includes(about),
      ),
    (found) => found.length >= count,
    { timeoutMs: 30_000, what: `${count} notification(s) about ${about} to ${recipient}` },
  );
}

const address = (who: string): string => `${who}-${randomUUID().slice(0, 8)}@example.org`;

async function addMember(session: AccountSession, email: string, role: MemberRole): Promise<void> {
  const response = await session.api.post(session.path('/members'), { email, role });
  expect(response.status).toBe(201);
}

/**
 * Platform notes 1.2 and 2.9: account members are emailed, through the operator's smarthost (a
 * loopback SMTP sink of the global setup), when the platform disables a webhook and when an API
 * key's IP allow list changes.
 */
describe('notifications to account members', () => {
  let receiver: CheckedWebhookReceiver;

  beforeAll(async () => {
    receiver = await CheckedWebhookReceiver.start();
  });

  afterAll(async () => {
    await receiver.close();
    await closeSessions();
  });

  it('emails every member when a webhook is disabled on 410 Gone', async () => {
    const owner = address('owner');
    const analyst = address('analyst');
    const session = await createAccountSession(undefined, undefined, owner);
    await addMember(session, analyst, 'Analyst');
    const name = `gone-${randomUUID().slice(0, 8)}`;
    receiver.behave(name, () => 410);
    const flags = Object.fromEntries(
      WEBHOOK_EVENT_FLAGS.map((flag) => [flag, flag === 'on_suppression_created']),
    );
    const created = await session.api.post<CreatedWebhookRecord>(session.path('/webhooks'), {
      name,
      url: receiver.url(name),
      scope: 'global',
      ...flags,
    });
    expect(created.status).toBe(201);
    receiver.serve(name, created.body);
    const suppressed = await session.api.post(session.path('/suppressions'), {
      email: address('suppressed'),
      expires_at: new Date(Date.now() + 86_400_000).toISOString(),
    });
    expect(suppressed.status).toBe(201);

    const [notice] = await noticesAbout(owner, name, 1);
    expect(notice?.rcptTo).toEqual([analyst, owner].sort());
    expect(notice?.text).toContain('its endpoint answered 410 Gone');
    expect(notice?.text).toContain(created.body.id);
    expect(notice?.text).toContain(`URL: ${receiver.url(name)}`);
    const webhook = await session.api.get<{ enabled: boolean }>(
      session.path(`/webhooks/${created.body.id}`),
    );
    expect(webhook.body.enabled).toBe(false);
    expect(receiver.problems()).toEqual([]);
  });

  it("emails the owner and administrators, not other members, when a key's allow list changes", async () => {
    const owner = address('owner');
    const admin = address('admin');
    const developer = address('developer');
    const session = await createAccountSession(undefined, undefined, owner);
    await addMember(session, admin, 'Administrator');
    await addMember(session, developer, 'Developer');

    const key = await createKey(session, ['accounts:read'], ['192.0.2.0/24']);
    const updated = await session.api.put(session.path(`/api-keys/${key.id}`), {
      ip_allow_list: ['192.0.2.0/24', '198.51.100.7'],
    });
    expect(updated.status).toBe(200);

    const [set, changed] = await noticesAbout(owner, key.id, 2);
    for (const notice of [set, changed]) expect(notice?.rcptTo).toEqual([admin, owner].sort());
    expect(set?.text).toContain('Previous list: none (any address may use the key)');
    expect(set?.text).toContain('New list: 192.0.2.0/24');
    expect(changed?.text).toContain('Previous list: 192.0.2.0/24');
    expect(changed?.text).toContain('New list: 192.0.2.0/24, 198.51.100.7');
    expect(changed?.text).toMatch(
      new RegExp(`Changed by: API key ${session.created.api_key.id} from \\S+`),
    );
    expect(notificationsFor(developer)).toEqual([]);
  });
});
