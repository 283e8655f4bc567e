import { Resolver } from 'node:dns/promises';

import { dkimVerify } from 'mailauth';

import { e2eEnvironment } from './environment';

/**
 * Each DKIM signature of a received message as `[signing domain, result]`, checked by an
 * independent verifier (mailauth) with the keys the domains service published, looked up in the
 * platform's DNS server.
 */
export async function dkimResults(raw: string): Promise<[string, string][]> {
  const resolver = new Resolver({ timeout: 1_000, tries: 2 });
  resolver.setServers([e2eEnvironment().dnsServer]);
  const dkim = await dkimVerify(raw, {
    resolver: (name, rrtype) =>
      rrtype === 'TXT'
        ? resolver.resolveTxt(name)
        : Promise.reject(new Error(`no ${rrtype} lookups expected`)),
  });
  return dkim.results.map((result) => [result.signingDomain, result.status.result]);
}
