import { randomBytes, randomUUID } from 'node:crypto';

import { type StreamEvent, streamSubject } from '@envoi/contracts-core';
import {
  type DomainChangedEvent,
  type DomainDnsErrorEvent,
  type DomainRecord,
  DomainsStreamSubjects,
  DomainsSubjects,
} from '@envoi/contracts-domains';
import { decodePacket, type NestEventPacket } from '@envoi/shared-nats';
import {
  DEFAULT_OUTBOX_RELAY_OPTIONS,
  enqueueEvent,
  eventsStreamDefinition,
  OutboxRelay,
  OutboxRelayService,
} from '@envoi/shared-outbox';
import { pollUntil, WebhookPayloadValidator } from '@envoi/shared-testing';

import {
  anyString,
  checkDns,
  createDomain,
  type DomainsTestApp,
  getDomain,
  newAccountId,
  publish,
  recordOf,
  runPeriodicCheck,
  type StreamMessage,
  streamMessages,
} from '../domains-test-app';

export function monitoringSuite(getApp: () => DomainsTestApp): void {
  describe('domains service: periodic checks and domain.dns_error', () => {
    let app: DomainsTestApp;

    beforeAll(() => {
      app = getApp();
    });

    async function dnsErrors(
      domain: DomainRecord,
    ): Promise<Array<StreamMessage<DomainDnsErrorEvent>>> {
      return (await streamMessages(app, DomainsStreamSubjects.dnsError)).filter(
        (message) => message.event.data.domain === domain.domain,
      );
    }

    /** Waits until the outbox has nothing left to publish for the domain's events. */
    async function outboxDrained(): Promise<void> {
      await pollUntil(
        () =>
          app.dataSource.query<Array<{ pending: string }>>(
            'SELECT count(*) AS pending FROM domains.outbox WHERE published_at IS NULL',
          ),
        (rows) => rows[0]?.pending === '0',
        { what: 'the outbox to be published' },
      );
    }

    it('emits domain.dns_error once per valid→invalid transition, durably', async () => {
      const domain = await createDomain(app, newAccountId());
      publish(app, domain);
      expect((await checkDns(app, domain)).dns_valid).toBe(true);

      // Valid → invalid: one event.
      app.dns.remove(`_dmarc.${domain.domain}`);
      await runPeriodicCheck(app, domain);
      const broken = await getDomain(app, domain);
      expect(broken.dns_valid).toBe(false);
      const first = await pollUntil(
        () => dnsErrors(domain),
        (messages) => messages.length >= 1,
        { what: 'the first domain.dns_error' },
      );
      expect(first).toEqual([
        {
          msgId: first[0]?.event.id,
          event: {
            id: anyString,
            type: 'domain.dns_error',
            timestamp: broken.last_dns_check_at,
            data: {
              domain: domain.domain,
              account_id: domain.account_id,
              spf_valid: true,
              dkim_valid: true,
              dmarc_valid: false,
              dns_last_checked_at: broken.last_dns_check_at,
            },
          },
        },
      ]);
      expect(new WebhookPayloadValidator().eventViolations(first[0].event)).toEqual([]);

      // Still invalid: no new event, however often it is checked.
      app.dns.remove(recordOf(domain, 'DKIM').host);
      await runPeriodicCheck(app, domain);
      await runPeriodicCheck(app, domain);
      await outboxDrained();
      expect(await dnsErrors(domain)).toHaveLength(1);

      // Fixed (valid again, no event), then broken again: a second event.
      publish(app, domain);
      await runPeriodicCheck(app, domain);
      expect((await getDomain(app, domain)).dns_valid).toBe(true);
      app.dns.set(domain.domain, [{ type: 'TXT', value: 'v=spf1 -all' }]);
      await runPeriodicCheck(app, domain);
      const second = await pollUntil(
        () => dnsErrors(domain),
        (messages) => messages.length >= 2,
        { what: 'the second domain.dns_error' },
      );
      await outboxDrained();
      expect(await dnsErrors(domain)).toHaveLength(2);
      expect(second[1]?.event.data).toMatchObject({
        spf_valid: false,
        dkim_valid: true,
        dmarc_valid: true,
      });
      expect(second[1]?.event.id).not.toBe(second[0]?.event.id);
    });

    it('never flips a valid domain on SERVFAIL or timeouts alone', async () => {
      const domain = await createDomain(app, newAccountId());
      publish(app, domain);
      await checkDns(app, domain);
      for (const record of domain.dns_records) app.dns.fail(record.host, 'servfail');
      app.dns.fail(recordOf(domain, 'DKIM').host, 'timeout');

      try {
        await runPeriodicCheck(app, domain);
        await runPeriodicCheck(app, domain);
        const checked = await getDomain(app, domain);
        expect(checked.dns_valid).toBe(true);
        expect(checked.dns_records.every((record) => record.propagated)).toBe(true);
        await outboxDrained();
        expect(await dnsErrors(domain)).toEqual([]);
      } finally {
        for (const record of domain.dns_records) app.dns.heal(record.host);
      }
    });

    it('does not emit domain.dns_error for a domain that was never valid', async () => {
      const domain = await createDomain(app, newAccountId());
      publish(app, domain, ['SPF']);

      await runPeriodicCheck(app, domain);

      expect((await getDomain(app, domain)).last_dns_check_at).not.toBeNull();
      await outboxDrained();
      expect(await dnsErrors(domain)).toEqual([]);
    });

    it('broadcasts validity changes so that caches drop their authorizations', async () => {
      const domain = await createDomain(app, newAccountId());
      const changes: DomainChangedEvent[] = [];
      const subscription = app.connection.subscribe(DomainsSubjects.domainChanged.name, {
        callback: (error, message) => {
          if (error) return;
          const event = decodePacket<NestEventPacket<DomainChangedEvent>>(message.data).data;
          if (event.domain_id === domain.id) changes.push(event);
        },
      });
      await app.connection.flush();

      try {
        publish(app, domain, ['Return-Path', 'Tracking']);
        await checkDns(app, domain);
        app.dns.remove(recordOf(domain, 'DKIM').host);
        await runPeriodicCheck(app, domain);

        await pollUntil(
          () => changes.length,
          (count) => count >= 2,
          { what: 'two domain.changed broadcasts' },
        );
        expect(changes).toEqual([
          {
            domain_id: domain.id,
            account_id: domain.account_id,
            domain: domain.domain,
            version: 2,
            reason: 'dns_validity',
          },
          {
            domain_id: domain.id,
            account_id: domain.account_id,
            domain: domain.domain,
            version: 3,
            reason: 'dns_validity',
          },
        ]);
        await expect(
          app.rpc.request(DomainsSubjects.authorizeSender, {
            account_id: domain.account_id,
            domain: domain.domain,
          }),
        ).resolves.toMatchObject({ dns_valid: false, version: 3 });
      } finally {
        subscription.unsubscribe();
      }
    });
  });
}

export function outboxSuite(getApp: () => DomainsTestApp): void {
  describe('domains service: outbox relay', () => {
    it('publishes each event once across competing relays, in order, with its id as Nats-Msg-Id', async () => {
      const app = getApp();
      const service = app.app.get(OutboxRelayService);
      const subject = streamSubject<StreamEvent<'test.relayed', { n: number }>>(
        `events.test.r${randomBytes(4).toString('hex')}.v1`,
      );
      const options = {
        ...DEFAULT_OUTBOX_RELAY_OPTIONS,
        stream: eventsStreamDefinition(),
        batchSize: 7,
      };
      const relays = [0, 1].map(
        () => new OutboxRelay(app.dataSource, app.connection, options, { warn: () => undefined }),
      );
      // Only this test's events are pending once the service's own relay is idle and stopped.
      await pollUntil(
        () =>
          app.dataSource.query<Array<{ pending: string }>>(
            'SELECT count(*) AS pending FROM domains.outbox WHERE published_at IS NULL',
          ),
        (rows) => rows[0]?.pending === '0',
        { what: 'the outbox to be published' },
      );
      await service.relay.stop();
      try {
        const ids = Array.from({ length: 50 }, () => randomUUID());
        await app.dataSource.transaction(async (manager) => {
          for (const [n, id] of ids.entries()) {
            await enqueueEvent(manager, subject, {
              id,
              type: 'test.relayed',
              timestamp: new Date().toISOString(),
              data: { n },
            });
          }
        });

        let published = 0;
        for (let round = 0; round < 50 && published < ids.length; round++) {
          const counts = await Promise.all(relays.map((relay) => relay.relayBatch()));
          published += counts.reduce((sum, count) => sum + count, 0);
        }

        expect(published).toBe(ids.length);
        const messages = await streamMessages(app, subject);
        expect(messages.map((message) => message.event.data.n).sort((a, b) => a - b)).toEqual(
          ids.map((_, n) => n),
        );
        expect(messages.every((message) => message.msgId === message.event.id)).toBe(true);
        const [row] = await app.dataSource.query<Array<{ pending: string }>>(
          'SELECT count(*) AS pending FROM domains.outbox WHERE id = ANY($1) AND published_at IS NULL',
          [ids],
        );
        expect(row?.pending).toBe('0');
      } finally {
        service.relay.start();
      }
    });
  });
}
