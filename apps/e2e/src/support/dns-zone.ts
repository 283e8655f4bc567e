import { randomUUID } from 'node:crypto';
import { Resolver } from 'node:dns/promises';
import { readFileSync, renameSync, watchFile, writeFileSync } from 'node:fs';

import { type DnsTestRecord, DnsTestServer } from '@envoi/shared-testing';

import { e2eEnvironment } from './environment';

/**
 * The platform's DNS in the e2e tier: a loopback DNS server (the domains service's DNS_SERVERS)
 * that serves the records of a JSON zone file. It runs in the jest global-setup process; specs,
 * in their worker, publish records by rewriting the file and waiting until the server answers
 * the file's version.
 */
interface ZoneFile {
  version: string;
  names: Record<string, DnsTestRecord[]>;
}

/** The TXT name whose answer is the version of the zone file last loaded. */
const VERSION_NAME = '_zone-version.e2e.test';
const RELOAD_POLL_MS = 50;

function readZone(file: string): ZoneFile {
  return JSON.parse(readFileSync(file, 'utf8')) as ZoneFile;
}

function writeZone(file: string, zone: ZoneFile): void {
  const temporary = `${file}.${process.pid}.tmp`;
  writeFileSync(temporary, JSON.stringify(zone));
  renameSync(temporary, file);
}

/** Global setup: starts the server and keeps it in step with the zone file. */
export async function startZoneFileDns(
  file: string,
  initial: Record<string, DnsTestRecord[]> = {},
): Promise<DnsTestServer> {
  writeZone(file, { version: 'initial', names: initial });
  const server = await DnsTestServer.start();
  const load = () => {
    const zone = readZone(file);
    server.reset();
    for (const [name, records] of Object.entries(zone.names)) server.set(name, records);
    server.set(VERSION_NAME, [{ type: 'TXT', value: zone.version }]);
  };
  load();
  watchFile(file, { interval: RELOAD_POLL_MS }, () => {
    try {
      load();
    } catch {
      // A half-written file cannot happen (writes rename), but never let the watcher die.
    }
  });
  return server;
}

/** Replaces the records of each name given (an empty list removes the name) and waits until served. */
export async function publishDns(names: Record<string, DnsTestRecord[]>): Promise<void> {
  const { dnsZoneFile, dnsServer } = e2eEnvironment();
  const zone = readZone(dnsZoneFile);
  for (const [name, records] of Object.entries(names)) {
    if (records.length === 0) delete zone.names[name];
    else zone.names[name] = records;
  }
  zone.version = randomUUID();
  writeZone(dnsZoneFile, zone);

  const resolver = new Resolver({ timeout: 500, tries: 1 });
  resolver.setServers([dnsServer]);
  const deadline = Date.now() + 10_000;
  while (Date.now() < deadline) {
    const served = await resolver.resolveTxt(VERSION_NAME).catch(() => []);
    if (served.some((strings) => strings.join('') === zone.version)) return;
    await new Promise((resolve) => setTimeout(resolve, RELOAD_POLL_MS));
  }
  throw new Error('the e2e DNS server did not load the published records within 10 s');
}
