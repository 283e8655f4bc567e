import { Resolver } from 'node:dns/promises';

import { dkimVerify } from 'mailauth';

/** One DKIM signature as an independent verifier (mailauth) judges it. */
export interface DkimVerdict {
  /** pass, fail, neutral, temperror, policy… */
  result: string;
  comment: string;
  domain: string;
  selector: string;
  canonicalization: string;
  /** The From domain the signature aligns with (false when it does not). */
  aligned: string | false;
  /** The header fields the signature covers, lowercase. */
  signedHeaders: string[];
}

/**
 * What mailauth 4.13 reports beyond (or unlike) its declared types: `format`,
 * `signingHeaders.keys`, and `status.aligned` as the aligned domain rather than a boolean.
 */
interface MailauthSignature {
  format?: string;
  signingHeaders?: { keys?: string };
  status: { aligned?: string | false };
}

/**
 * Verifies every DKIM signature of a received message with mailauth, fetching the public keys
 * from the DNS server at `dnsServer` (`host:port`, the test DNS server where the domains service's
 * records are published), never from the system's resolvers.
 */
export async function verifyDkim(raw: Buffer | string, dnsServer: string): Promise<DkimVerdict[]> {
  const resolver = new Resolver({ timeout: 1_000, tries: 2 });
  resolver.setServers([dnsServer]);
  const { results } = await dkimVerify(raw, {
    resolver: (name, rrtype) => {
      if (rrtype !== 'TXT') {
        return Promise.reject(
          Object.assign(new Error(`no ${rrtype} lookups expected`), { code: 'ENOTFOUND' }),
        );
      }
      return resolver.resolveTxt(name);
    },
  });
  return results.map((signature) => {
    const extra = signature as unknown as MailauthSignature;
    return {
      result: signature.status.result,
      comment: typeof signature.status.comment === 'string' ? signature.status.comment : '',
      domain: signature.signingDomain,
      selector: signature.selector ?? '',
      canonicalization: extra.format ?? '',
      aligned: extra.status.aligned ?? false,
      signedHeaders: (extra.signingHeaders?.keys ?? '')
        .split(':')
        .map((name) => name.trim().toLowerCase())
        .filter(Boolean),
    };
  });
}
