import type { DnsRecord, DomainRecord } from '@envoi/contracts-domains';
import type { RunningPlatform } from '@envoi/shared-infra';
// The loopback DNS server the e2e tier uses: the domains service resolves through it, so a
// benchmark domain verifies without the internet (a benchmark is a test harness too).
import { type DnsTestRecord, DnsTestServer } from '@envoi/shared-testing';

import { type BenchAccount, startBenchPlatform } from './bench-platform';
import type { BenchRun } from './bench-run';
import { sendTrusted } from './load';

export { DnsTestServer };

/** How often `check-dns` is asked before giving up (records are served at once, so 1 suffices). */
const CHECK_ATTEMPTS = 10;
const CHECK_PAUSE_MS = 300;

/** The record a customer would publish for one of the domain's `dns_records` (as apps/e2e). */
function toTestRecord(record: DnsRecord): DnsTestRecord {
  if (record.type === 'TXT') return { type: 'TXT', value: record.content };
  if (record.type === 'CNAME') return { type: 'CNAME', target: record.content };
  const [priority, exchange] = record.content.split(/\s+/);
  return { type: 'MX', exchange: exchange ?? '', priority: Number(priority) };
}

/**
 * Creates a sending domain over the gateway, publishes every record it asks for on `dns` (the
 * domains service's DNS_SERVERS) and asks for a DNS check until the domain is `dns_valid`.
 */
export async function createVerifiedDomain(
  gateway: { baseUrl: string; ca: string },
  account: BenchAccount,
  dns: DnsTestServer,
  name: string,
  signal: AbortSignal,
): Promise<DomainRecord> {
  const headers = {
    authorization: `Bearer ${account.apiKey}`,
    'content-type': 'application/json',
  };
  const base = `/v2/accounts/${account.accountId}/domains`;
  const created = await sendTrusted(gateway, {
    method: 'POST',
    path: base,
    headers,
    body: JSON.stringify({ domain: name }),
  });
  if (created.status !== 201) {
    throw new Error(`creating domain ${name}: ${created.status} ${created.body.slice(0, 300)}`);
  }
  const domain = JSON.parse(created.body) as DomainRecord;
  const byHost = new Map<string, DnsTestRecord[]>();
  for (const record of domain.dns_records) {
    byHost.set(record.host, [...(byHost.get(record.host) ?? []), toTestRecord(record)]);
  }
  for (const [host, records] of byHost) dns.set(host, records);

  let last = '';
  for (let attempt = 1; attempt <= CHECK_ATTEMPTS; attempt += 1) {
    signal.throwIfAborted();
    const checked = await sendTrusted(gateway, {
      method: 'POST',
      path: `${base}/${name}/check-dns`,
      headers,
      body: '{}',
    });
    last = `${checked.status} ${checked.body.slice(0, 500)}`;
    if (checked.status === 200) {
      const record = JSON.parse(checked.body) as DomainRecord;
      if (record.dns_valid) return record;
    }
    await new Promise((resolve) => setTimeout(resolve, CHECK_PAUSE_MS));
  }
  throw new Error(`domain ${name} did not verify after ${CHECK_ATTEMPTS} checks: ${last}`);
}

/**
 * A loopback DNS server and a throwaway platform whose services resolve through it, both stopped
 * when the benchmark ends.
 */
export async function startPlatformWithDns(
  { root, dataDir, stoppers, signal, log }: BenchRun,
  serviceEnv: NodeJS.ProcessEnv = {},
): Promise<{ platform: RunningPlatform; dns: DnsTestServer }> {
  const dns = await DnsTestServer.start();
  stoppers.add('dns server', () => dns.stop());
  log(`starting a throwaway platform in ${dataDir} (DNS on ${dns.address})`);
  const platform = await startBenchPlatform(root, dataDir, log, {
    DNS_SERVERS: dns.address,
    DNS_TIMEOUT_MS: '1000',
    ...serviceEnv,
  });
  stoppers.add('platform', () => platform.stop());
  signal.throwIfAborted();
  return { platform, dns };
}
