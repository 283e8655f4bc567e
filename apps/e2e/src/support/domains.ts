import { randomUUID } from 'node:crypto';

import type { DomainRecord } from '@envoi/contracts-domains';
import { type DnsTestRecord, testRecordOf } from '@envoi/shared-testing';

import type { AccountSession } from './account-session';
import { publishDns } from './dns-zone';

export type DnsRecord = DomainRecord['dns_records'][number];

export function uniqueDomain(): string {
  return `d${randomUUID().slice(0, 12)}.example.test`;
}

/** Publishes the records the domain asks for (all of them, or those `keep` selects). */
export async function publishRecords(
  domain: DomainRecord,
  keep: (record: DnsRecord) => boolean = () => true,
): Promise<void> {
  const names: Record<string, DnsTestRecord[]> = {};
  for (const record of domain.dns_records.filter(keep)) {
    (names[record.host] ??= []).push(testRecordOf(record));
  }
  await publishDns(names);
}

/** A new (unverified) domain of the session's account; its name. */
export async function createDomainName(
  session: Pick<AccountSession, 'api' | 'path'>,
): Promise<string> {
  const domain = uniqueDomain();
  const created = await session.api.post(session.path('/domains'), { domain });
  if (created.status !== 201) throw new Error(`domain creation failed: ${created.text}`);
  return domain;
}

/** A domain of the session's account whose DNS has verified: mail can be sent from it. */
export async function createVerifiedDomain(
  session: Pick<AccountSession, 'api' | 'path'>,
  name = uniqueDomain(),
): Promise<DomainRecord> {
  const created = await session.api.post<DomainRecord>(session.path('/domains'), { domain: name });
  if (created.status !== 201) throw new Error(`domain creation failed: ${created.text}`);
  await publishRecords(created.body);
  const checked = await session.api.post<DomainRecord>(session.path(`/domains/${name}/check-dns`));
  if (!checked.body.dns_valid) throw new Error(`domain did not verify: ${checked.text}`);
  return checked.body;
}
