import { createPublicKey, generateKeyPairSync } from 'node:crypto';

import { dkimRecordMatches, dkimTags, isDmarcRecord, isSpfRecord, spfTerms } from './record-checks';

const { publicKey } = generateKeyPairSync('rsa', { modulusLength: 1024 });
const SPKI = publicKey.export({ type: 'spki', format: 'der' }).toString('base64');
const PKCS1 = publicKey.export({ type: 'pkcs1', format: 'der' }).toString('base64');
const OTHER = generateKeyPairSync('rsa', { modulusLength: 1024 })
  .publicKey.export({ type: 'spki', format: 'der' })
  .toString('base64');

describe('SPF', () => {
  it.each([
    ['v=spf1 include:a.test ~all', true],
    ['V=SPF1 -all', true],
    ['v=spf1', true],
    ['"v=spf1 include:a.test"', true],
    ['v=spf10 include:a.test', false],
    ['spf1 include:a.test', false],
    ['google-site-verification=x', false],
  ])('%j is an SPF record: %s', (txt, expected) => {
    expect(isSpfRecord(txt)).toBe(expected);
  });

  it('reads includes with any qualifier and the redirect, skipping macros', () => {
    expect(
      spfTerms(
        'v=spf1 ip4:192.0.2.0/24 include:A.test. +include:b.test ~include:c.test include:%{i}.x.test redirect=_spf.D.test -all',
      ),
    ).toEqual({ includes: ['a.test', 'b.test', 'c.test'], redirect: '_spf.d.test' });
    expect(spfTerms('v=spf1 -all')).toEqual({ includes: [], redirect: null });
  });
});

describe('DKIM', () => {
  it('reads tags, first one wins', () => {
    expect(dkimTags('v=DKIM1; k=rsa; p=abc; p=def;')).toEqual(
      new Map([
        ['v', 'DKIM1'],
        ['k', 'rsa'],
        ['p', 'abc'],
      ]),
    );
  });

  it.each([
    ['the canonical form', `v=DKIM1; k=rsa; p=${SPKI}`],
    ['no spaces', `v=DKIM1;k=rsa;p=${SPKI}`],
    ['folded whitespace in the key', `v=DKIM1; p=${SPKI.slice(0, 40)}\n\t ${SPKI.slice(40)}`],
    ['literal quotes', `"v=DKIM1; k=rsa; ""p=${SPKI}"`],
    ['a PKCS#1 key', `v=DKIM1; k=rsa; p=${PKCS1}`],
    ['tags only p', `p=${SPKI}`],
  ])('matches %s', (_name, txt) => {
    expect(dkimRecordMatches(txt, SPKI)).toBe(true);
  });

  it.each([
    ['another key', `v=DKIM1; k=rsa; p=${OTHER}`],
    ['a revoked key', 'v=DKIM1; k=rsa; p='],
    ['a truncated key', `v=DKIM1; k=rsa; p=${SPKI.slice(0, -10)}`],
    ['another key type', `v=DKIM1; k=ed25519; p=${SPKI}`],
    ['another version', `v=DKIM2; p=${SPKI}`],
    ['not base64', `v=DKIM1; p=${SPKI}!`],
    ['no key', 'v=DKIM1; k=rsa'],
  ])('does not match %s', (_name, txt) => {
    expect(dkimRecordMatches(txt, SPKI)).toBe(false);
  });

  it('compares key material, not encodings', () => {
    const reencoded = createPublicKey({
      key: Buffer.from(PKCS1, 'base64'),
      format: 'der',
      type: 'pkcs1',
    })
      .export({ type: 'spki', format: 'der' })
      .toString('base64');
    expect(dkimRecordMatches(`p=${PKCS1}`, reencoded)).toBe(true);
  });
});

describe('DMARC', () => {
  it.each([
    ['v=DMARC1; p=none', true],
    ['v=DMARC1', true],
    ['v = DMARC1 ; p=reject', true],
    ['"v=DMARC1; p=quarantine"', true],
    ['v=DMARC2; p=none', false],
    ['p=none; v=DMARC1', false],
    ['v=spf1 -all', false],
  ])('%j is a DMARC record: %s', (txt, expected) => {
    expect(isDmarcRecord(txt)).toBe(expected);
  });
});
