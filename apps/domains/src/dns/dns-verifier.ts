import type { ExpectedRecord } from '../domains/dns-records';
import { type DnsLookup, type Lookup, sameHost } from './dns-lookup';
import { dkimRecordMatches, isDmarcRecord, isSpfRecord, spfTerms } from './record-checks';

/**
 * What a record's check found: published correctly, authoritatively missing or wrong, or unknown
 * because DNS did not answer (which must never change what was known before).
 */
export type RecordOutcome =
  { status: 'pass' } | { status: 'fail'; reason: string } | { status: 'transient'; reason: string };

const PASS: RecordOutcome = { status: 'pass' };
const fail = (reason: string): RecordOutcome => ({ status: 'fail', reason });
const unknown = (found: { reason: string }): RecordOutcome => ({
  status: 'transient',
  reason: found.reason,
});

/** SPF's limit on lookups caused by one evaluation (RFC 7208 §4.6.4). */
export const SPF_LOOKUP_LIMIT = 10;
/** DMARC policy discovery walks up at most this many names (DMARCbis tree walk). */
export const DMARC_WALK_LIMIT = 8;

export class DnsVerifier {
  constructor(private readonly lookup: DnsLookup) {}

  verify(record: ExpectedRecord): Promise<RecordOutcome> {
    const { verification } = record;
    switch (verification.kind) {
      case 'spf':
        return this.spf(record.host, verification.include, { left: SPF_LOOKUP_LIMIT });
      case 'dkim':
        return this.dkim(record.host, verification.publicKey);
      case 'dmarc':
        return this.dmarc(verification.domain);
      case 'cname':
        return this.cname(record.host, verification.target);
      case 'mx':
        return this.mx(record.host, verification.exchange);
    }
  }

  /**
   * Passes when the domain's one SPF record includes ours, directly or through its own includes
   * or redirect (other includes are welcome: records are merged, not replaced).
   */
  private async spf(
    domain: string,
    include: string,
    budget: { left: number },
  ): Promise<RecordOutcome> {
    const found = await this.lookup.txt(domain);
    if (found.kind === 'transient') return unknown(found);
    const spf = found.kind === 'found' ? found.records.filter(isSpfRecord) : [];
    if (spf.length === 0) return fail(`no SPF record at ${domain}`);
    if (spf.length > 1) return fail(`more than one SPF record at ${domain}`);
    const terms = spfTerms(spf[0] ?? '');
    if (terms.includes.some((target) => sameHost(target, include))) return PASS;
    let transient: RecordOutcome | null = null;
    const nested = terms.redirect === null ? terms.includes : [...terms.includes, terms.redirect];
    for (const target of nested) {
      if (budget.left <= 0) break;
      budget.left--;
      const outcome = await this.spf(target, include, budget);
      if (outcome.status === 'pass') return PASS;
      if (outcome.status === 'transient') transient = outcome;
    }
    return transient ?? fail(`the SPF record of ${domain} does not include ${include}`);
  }

  private async dkim(host: string, publicKey: string): Promise<RecordOutcome> {
    const found = await this.lookup.txt(host);
    if (found.kind === 'transient') return unknown(found);
    if (found.kind === 'absent') return fail(`no DKIM record at ${host}`);
    return found.records.some((txt) => dkimRecordMatches(txt, publicKey))
      ? PASS
      : fail(`the DKIM record at ${host} does not hold the domain's public key`);
  }

  /** A DMARC record at `_dmarc.<domain>`, or at the nearest parent that has one. */
  private async dmarc(domain: string): Promise<RecordOutcome> {
    const labels = domain.split('.');
    for (let start = 0; start < Math.min(labels.length - 1, DMARC_WALK_LIMIT); start++) {
      const host = `_dmarc.${labels.slice(start).join('.')}`;
      const found = await this.lookup.txt(host);
      if (found.kind === 'transient') return unknown(found);
      const dmarc = found.kind === 'found' ? found.records.filter(isDmarcRecord) : [];
      if (dmarc.length === 1) return PASS;
      if (dmarc.length > 1) return fail(`more than one DMARC record at ${host}`);
    }
    return fail(`no DMARC record at _dmarc.${domain}`);
  }

  private async cname(host: string, target: string): Promise<RecordOutcome> {
    return this.matching(await this.lookup.cnameChain(host), target, `CNAME at ${host}`);
  }

  private async mx(host: string, exchange: string): Promise<RecordOutcome> {
    return this.matching(await this.lookup.mx(host), exchange, `MX record of ${host}`);
  }

  private matching(found: Lookup<string>, expected: string, what: string): RecordOutcome {
    if (found.kind === 'transient') return unknown(found);
    if (found.kind === 'absent') return fail(`no ${what}`);
    return found.records.some((value) => sameHost(value, expected))
      ? PASS
      : fail(`the ${what} does not point to ${expected}`);
  }
}
