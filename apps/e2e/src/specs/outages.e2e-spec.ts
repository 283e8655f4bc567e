import { randomUUID } from 'node:crypto';

import type { DomainRecord } from '@envoi/contracts-domains';
import type { CreateMessageResult, MessageRecord } from '@envoi/contracts-messages';
import { PLATFORM_SERVICES } from '@envoi/shared-infra';
import { pollUntil } from '@envoi/shared-testing';

import type { AccountSession } from '../support/account-session';
import { createVerifiedDomain } from '../support/domains';
import { allAnswer, readinessByService } from '../support/health';
import { OutagePlatform } from '../support/outage-platform';
import { receiptsFor } from '../support/smtp-receipts';

/** One send request and what came back. */
interface Sent {
  to: string;
  status: number;
  retryAfter: string | undefined;
  id: string | null;
}

/** Sends in sequence while the window lasts (and at most `max` times). */
const WINDOW_SENDS_MAX = 50;

/**
 * Reliability plan S4 and S5 on a platform of its own: PostgreSQL stopped immediately, and
 * nats-server killed, while the API is used. While a dependency is down a send gets 503 with
 * Retry-After, never a 2xx; once it is back, sends succeed again; every accepted message is
 * delivered exactly once, and no refused one is delivered at all.
 */
describe('outages (reliability plan S4, S5)', () => {
  let outage: OutagePlatform | undefined;
  let session: AccountSession;
  let domain: DomainRecord;

  beforeAll(async () => {
    outage = await OutagePlatform.start();
    session = await outage.createAccountSession(`e2e-outage-${randomUUID().slice(0, 8)}`);
    domain = await createVerifiedDomain(session);
  }, 180_000);

  afterAll(async () => {
    await outage?.stop();
  }, 120_000);

  const platform = (): OutagePlatform => {
    if (!outage) throw new Error('the outage platform did not start');
    return outage;
  };

  async function send(tag: string): Promise<Sent> {
    const to = `outage-${tag}-${randomUUID().slice(0, 8)}@example.net`;
    const response = await session.api.post<CreateMessageResult>(session.path('/messages'), {
      from: { email: `app@${domain.domain}` },
      recipients: [{ email: to }],
      subject: `Outage ${tag}`,
      text_content: 'Hello through an outage',
    });
    const retryAfter = response.headers['retry-after'];
    return {
      to,
      status: response.status,
      retryAfter: typeof retryAfter === 'string' ? retryAfter : undefined,
      id: response.status === 202 ? (response.body.data[0]?.id ?? null) : null,
    };
  }

  async function sendDuring(tag: string, windowMs: number): Promise<Sent[]> {
    const sent: Sent[] = [];
    const deadline = Date.now() + windowMs;
    while (Date.now() < deadline && sent.length < WINDOW_SENDS_MAX) sent.push(await send(tag));
    return sent;
  }

  /** Sends until one is accepted again; the time that took is the recovery. */
  async function sendUntilAccepted(tag: string): Promise<{ sent: Sent[]; recoveryMs: number }> {
    const started = Date.now();
    const sent: Sent[] = [];
    while (sent.length < WINDOW_SENDS_MAX && Date.now() - started < 90_000) {
      const attempt = await send(tag);
      sent.push(attempt);
      if (attempt.status === 202) return { sent, recoveryMs: Date.now() - started };
      await new Promise((resolve) => setTimeout(resolve, 250));
    }
    throw new Error(`no send was accepted within 90 s: ${JSON.stringify(sent.slice(-3))}`);
  }

  async function status(id: string): Promise<string> {
    const response = await session.api.get<MessageRecord>(
      session.path(`/messages/${encodeURIComponent(id)}`),
    );
    return response.status === 200 ? response.body.status : `HTTP ${response.status}`;
  }

  async function waitDelivered(sent: Sent[]): Promise<void> {
    for (const entry of sent) {
      if (!entry.id) throw new Error(`${entry.to} was accepted without an id`);
      const id = entry.id;
      await pollUntil(
        () => status(id),
        (current) => current === 'Delivered',
        { timeoutMs: 60_000, intervalMs: 200, what: `${entry.to} to be Delivered` },
      );
    }
  }

  /** What a send may answer while a dependency is down: 503 with Retry-After, never a 2xx. */
  function expectRefusedForNow(sent: Sent[]): void {
    expect(sent.length).toBeGreaterThan(0);
    for (const entry of sent) {
      expect({ to: entry.to, status: entry.status }).toEqual({ to: entry.to, status: 503 });
      expect(entry.retryAfter).toMatch(/^[1-9][0-9]*$/);
    }
  }

  /** Polls the `/readyz` of every service (or of those `names`) until each answers `status`. */
  async function waitReadiness(status: 200 | 503, names?: readonly string[]): Promise<void> {
    const health = Object.fromEntries(
      Object.entries(platform().platform.health).filter(
        ([name]) => names === undefined || names.includes(name),
      ),
    );
    await pollUntil(() => readinessByService(health), allAnswer(status), {
      timeoutMs: 60_000,
      intervalMs: 200,
      what: `${names ? names.join(', ') : "every service's"} /readyz to answer ${status}`,
    });
  }

  /** Each accepted message arrived exactly once, each refused one never. */
  function expectExactlyOnce(accepted: Sent[], refused: Sent[]): void {
    expect(accepted.map((entry) => [entry.to, receiptsFor(entry.to).length])).toEqual(
      accepted.map((entry) => [entry.to, 1]),
    );
    expect(refused.filter((entry) => receiptsFor(entry.to).length > 0)).toEqual([]);
  }

  /**
   * The scenario: two sends delivered (so nothing is in flight when it goes down: any duplicate
   * afterwards is a bug), the dependency down for a window of sends, back up, sends until one is
   * accepted again, two more; then every check. The readiness of every service that `dependents`
   * names (all of them when absent) goes 503 while it is down, and every one is back to 200 after.
   */
  async function survive(
    tag: string,
    down: () => Promise<void>,
    up: () => Promise<void>,
    dependents?: readonly string[],
  ): Promise<string> {
    const before = [await send(`${tag}-before`), await send(`${tag}-before`)];
    expect(before.map((entry) => entry.status)).toEqual([202, 202]);
    await waitDelivered(before);

    await waitReadiness(200);
    await down();
    const whileDown = await sendDuring(`${tag}-down`, 3_000);
    await waitReadiness(503, dependents);
    await up();
    const { sent: recovering, recoveryMs } = await sendUntilAccepted(`${tag}-recovering`);
    const after = [await send(`${tag}-after`), await send(`${tag}-after`)];
    await waitReadiness(200);

    expectRefusedForNow(whileDown);
    const accepted = [...before, ...recovering, ...after].filter((entry) => entry.status === 202);
    const refused = [...whileDown, ...recovering].filter((entry) => entry.status !== 202);
    expectRefusedForNow(refused);
    expect(after.map((entry) => entry.status)).toEqual([202, 202]);
    await waitDelivered(accepted);
    // A request the gateway gave up on must not go out later either: give it time to.
    await new Promise((resolve) => setTimeout(resolve, 3_000));
    expectExactlyOnce(accepted, refused);
    return `accepted ${accepted.length}, refused ${refused.length} (503), lost 0, dup 0, recovery ${recoveryMs} ms`;
  }

  it('S5: PostgreSQL stopped immediately, then started: 503 meanwhile, nothing accepted is lost', async () => {
    const figures = await survive(
      'pg',
      () => platform().stopPostgresImmediately(),
      () => platform().startPostgresAgain(),
      // The smtp edge keeps no data: PostgreSQL down does not make it unready.
      PLATFORM_SERVICES.filter((service) => service.migrations).map((service) => service.name),
    );
    console.log(`S5: ${figures}`);
  }, 240_000);

  it('S4: nats-server killed, then started: 503 meanwhile, nothing accepted is lost', async () => {
    const figures = await survive(
      'nats',
      () => platform().killNats(),
      () => platform().startNatsAgain(),
    );
    console.log(`S4: ${figures}`);
  }, 240_000);
});
