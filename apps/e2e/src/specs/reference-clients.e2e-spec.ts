import { randomUUID } from 'node:crypto';

import type { PaginatedList } from '@envoi/contracts-core';
import type { DomainRecord } from '@envoi/contracts-domains';
import type {
  CreateMessageResult,
  MessageRecord,
  MessageSummaryRecord,
} from '@envoi/contracts-messages';
import type { SuppressionRecord } from '@envoi/contracts-suppressions';

import {
  type AccountSession,
  closeSessions,
  createAccountSession,
} from '../support/account-session';
import type { ApiResponse } from '../support/api-client';
import { createVerifiedDomain, uniqueDomain } from '../support/domains';
import { expectError } from '../support/expect-error';

/** The most pages a paging loop follows before the test gives up. */
const MAX_PAGES = 10;

function uniqueRecipient(): string {
  return `r-${randomUUID().slice(0, 8)}@example.net`;
}

const IN_A_MONTH = (): string => new Date(Date.now() + 30 * 86_400_000).toISOString();

type ListResponse = ApiResponse<PaginatedList<{ id: string }>>;

const ids = (response: ListResponse): string[] => response.body.data.map((record) => record.id);

/** The client's query answers 200 and the same `count` records as the query without empties. */
function expectSameList(client: ListResponse, plain: ListResponse, count: number): void {
  expect(client.status).toBe(200);
  expect(ids(client)).toHaveLength(count);
  expect(ids(client)).toEqual(ids(plain));
}

/**
 * The reference service's Go CLI and SDK send every query parameter and body field, unset ones
 * empty ("") or null, and page with `cursor` (platform notes 5). These requests are theirs,
 * verbatim; each must mean what it means without the empty parts.
 */
describe('reference clients (issue 11)', () => {
  afterAll(async () => {
    await closeSessions();
  });

  async function sender(): Promise<{ session: AccountSession; domain: DomainRecord }> {
    const session = await createAccountSession();
    return { session, domain: await createVerifiedDomain(session) };
  }

  function send(session: AccountSession, body: Record<string, unknown>) {
    return session.api.post<CreateMessageResult>(session.path('/messages'), body);
  }

  async function sendTo(
    session: AccountSession,
    domain: DomainRecord,
    recipients: string[],
  ): Promise<void> {
    const response = await send(session, {
      from: { email: `app@${domain.domain}` },
      recipients: recipients.map((email) => ({ email })),
      subject: 'Hello',
      text_content: 'Hello there',
    });
    expect(response.status).toBe(202);
  }

  function getMessage(session: AccountSession, id: string) {
    return session.api.get<MessageRecord>(session.path(`/messages/${encodeURIComponent(id)}`));
  }

  function listMessages(session: AccountSession, query: string) {
    return session.api.get<PaginatedList<MessageSummaryRecord>>(session.path(`/messages${query}`));
  }

  function listSuppressions(session: AccountSession, query: string) {
    return session.api.get<PaginatedList<SuppressionRecord>>(session.path(`/suppressions${query}`));
  }

  async function suppress(session: AccountSession, domain?: string): Promise<SuppressionRecord> {
    const response = await session.api.post<{ data: SuppressionRecord[] }>(
      session.path('/suppressions'),
      { email: uniqueRecipient(), expires_at: IN_A_MONTH(), ...(domain ? { domain } : {}) },
    );
    expect(response.status).toBe(201);
    const [created] = response.body.data;
    if (!created) throw new Error('no suppression in the 201');
    return created;
  }

  describe('sending', () => {
    it('accepts an attachment with "content_disposition": "" as one without it', async () => {
      const { session, domain } = await sender();
      const response = await send(session, {
        from: { email: `app@${domain.domain}` },
        recipients: [{ email: uniqueRecipient() }],
        subject: 'Report',
        text_content: 'Attached.',
        attachments: [
          {
            data: 'a,b\n1,2\n',
            content_type: 'text/csv',
            file_name: 'report.csv',
            content_disposition: '',
          },
        ],
      });

      expect(response.status).toBe(202);
      const [created] = response.body.data;
      expect(created?.status).toBe('queued');
      const fetched = await getMessage(session, created?.id ?? '');
      expect(fetched.body.content).toMatch(/Content-Disposition: attachment; filename=report\.csv/);
    });

    it('accepts a body whose every unset field is "" or null, as the Go SDK sends it', async () => {
      const { session, domain } = await sender();
      const response = await send(session, {
        from: { email: `app@${domain.domain}`, name: '' },
        recipients: [{ email: uniqueRecipient(), name: '', substitutions: null }],
        reply_to: null,
        subject: 'Zero values',
        text_content: 'Hello',
        html_content: '',
        amp_content: '',
        attachments: [
          {
            base64: false,
            data: 'hello',
            content_type: 'text/plain',
            content_disposition: '',
            content_id: '',
            file_name: 'hello.txt',
          },
        ],
        headers: null,
        substitutions: null,
        tags: null,
        sandbox: false,
        sandbox_result: '',
        tracking: null,
        retention: null,
        schedule: null,
      });

      expect(response.status).toBe(202);
      const [created] = response.body.data;
      expect(created?.status).toBe('queued');
      const fetched = await getMessage(session, created?.id ?? '');
      const content = fetched.body.content ?? '';
      expect(content).toMatch(/Content-Disposition: attachment; filename=hello\.txt/);
      expect(content).not.toMatch(/text\/x-amp-html|text\/html|Reply-To:|Content-ID:/i);
    });
  });

  describe('lists', () => {
    it('lists messages for ?cursor=&limit=100&recipient=&status= as for ?limit=100', async () => {
      const { session, domain } = await sender();
      await sendTo(session, domain, [uniqueRecipient(), uniqueRecipient()]);

      expectSameList(
        await listMessages(session, '?cursor=&limit=100&recipient=&status='),
        await listMessages(session, '?limit=100'),
        2,
      );
    });

    it('pages messages with cursor=<next_cursor>, as the CLI does', async () => {
      const { session, domain } = await sender();
      await sendTo(session, domain, [uniqueRecipient(), uniqueRecipient(), uniqueRecipient()]);
      const all = ids(await listMessages(session, '?limit=100'));
      expect(all).toHaveLength(3);

      const paged: string[] = [];
      let cursor = '';
      for (let page = 0; page < MAX_PAGES; page++) {
        const response = await listMessages(
          session,
          `?cursor=${encodeURIComponent(cursor)}&limit=1&recipient=&status=`,
        );
        expect(response.status).toBe(200);
        paged.push(...ids(response));
        if (!response.body.pagination.has_more) break;
        cursor = response.body.pagination.next_cursor ?? '';
        expect(cursor).not.toBe('');
      }
      expect(paged).toEqual(all);
    });

    it('lists suppressions for ?domain=&limit=50 as for ?limit=50', async () => {
      const session = await createAccountSession();
      await suppress(session);
      await suppress(session, uniqueDomain());

      expectSameList(
        await listSuppressions(session, '?domain=&limit=50'),
        await listSuppressions(session, '?limit=50'),
        2,
      );
    });

    it('takes an empty parameter as absent on the other lists too', async () => {
      const { session, domain } = await sender();

      const domains = await session.api.get<PaginatedList<DomainRecord>>(
        session.path('/domains?cursor=&dns_valid=&limit=100'),
      );
      expect(domains.status).toBe(200);
      expect(domains.body.data.map((record) => record.domain)).toEqual([domain.domain]);

      const keys = await session.api.get<PaginatedList<{ id: string }>>(
        session.path('/api-keys?cursor=&limit=100'),
      );
      expect(keys.status).toBe(200);
      expect(ids(keys)).toEqual([session.created.api_key.id]);
    });

    it('still requires the email of deleteSuppression: ?email=&domain= is a 400', async () => {
      const session = await createAccountSession();
      const kept = await suppress(session);

      expectError(
        await session.api.delete(session.path('/suppressions?email=&domain=')),
        400,
        'email is required',
      );
      expect(ids(await listSuppressions(session, ''))).toEqual([kept.id]);
    });
  });

  describe('suppressions of a domain (platform notes 1.7: 404 for an unknown domain)', () => {
    it('answers 404 for a domain the account does not own, on list and wipe, deleting nothing', async () => {
      const session = await createAccountSession();
      const other = await createAccountSession();
      const owned = uniqueDomain();
      const theirs = uniqueDomain();
      const unknown = uniqueDomain();
      expect((await session.api.post(session.path('/domains'), { domain: owned })).status).toBe(
        201,
      );
      expect((await other.api.post(other.path('/domains'), { domain: theirs })).status).toBe(201);
      const ofOwned = await suppress(session, owned);
      const ofTheirs = await suppress(session, theirs);
      const ofUnknown = await suppress(session, unknown);
      const before = ids(await listSuppressions(session, ''));
      expect([...before].sort()).toEqual([ofOwned.id, ofTheirs.id, ofUnknown.id].sort());

      for (const domain of [unknown, theirs]) {
        expectError(await listSuppressions(session, `?domain=${domain}`), 404, 'domain not found');
        expectError(
          await session.api.delete(session.path(`/suppressions/all?domain=${domain}`)),
          404,
          'domain not found',
        );
      }
      expect(ids(await listSuppressions(session, ''))).toEqual(before);

      expect(ids(await listSuppressions(session, `?domain=${owned.toUpperCase()}`))).toEqual([
        ofOwned.id,
      ]);
      expectError(await listSuppressions(session, '?domain=not%20a%20domain'), 400);
      expectError(
        await session.api.delete(session.path('/suppressions/all?domain=not%20a%20domain')),
        400,
      );
    });
  });
});
