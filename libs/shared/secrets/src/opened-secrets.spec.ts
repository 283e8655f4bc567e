import { randomBytes } from 'node:crypto';

import { AesGcmCipher } from './aes-gcm-cipher';
import { OpenedSecrets, type OpenSecret } from './opened-secrets';

describe('OpenedSecrets', () => {
  const aes = new AesGcmCipher(randomBytes(32).toString('hex'));
  /** Sealed for one row, as the services seal their secrets: opens for that row only. */
  const cipher = {
    seal: (secret: string, id: string) => aes.sealText(secret, `test:${id}`),
    open: (id: string, sealed: string) => aes.openText(sealed, `test:${id}`),
  };
  const counting = () => {
    let opens = 0;
    const counted: OpenSecret = (id, sealed) => {
      opens += 1;
      return cipher.open(id, sealed);
    };
    return { counted, opens: () => opens };
  };

  it('opens a webhook’s sealed secret once, and again once it differs', () => {
    const { counted, opens } = counting();
    const secrets = new OpenedSecrets(counted);
    const first = cipher.seal('whsec_first', 'hook-a');
    const second = cipher.seal('whsec_second', 'hook-a');

    expect(secrets.open('hook-a', first)).toBe('whsec_first');
    expect(secrets.open('hook-a', first)).toBe('whsec_first');
    expect(opens()).toBe(1);
    expect(secrets.open('hook-a', second)).toBe('whsec_second');
    expect(opens()).toBe(2);
  });

  it('keeps no more than its limit, the oldest opened dropped first', () => {
    const { counted, opens } = counting();
    const secrets = new OpenedSecrets(counted, 2);
    const sealed = (id: string) => cipher.seal(`whsec_${id}`, id);
    const a = sealed('a');
    const b = sealed('b');
    const c = sealed('c');

    for (const [id, value] of [
      ['a', a],
      ['b', b],
      ['c', c],
      ['b', b],
      ['c', c],
    ] as const) {
      secrets.open(id, value);
    }
    expect(opens()).toBe(3);
    expect(secrets.open('a', a)).toBe('whsec_a');
    expect(opens()).toBe(4);
  });

  it('keeps nothing of an envelope that does not open', () => {
    const { counted, opens } = counting();
    const secrets = new OpenedSecrets(counted);
    const other = cipher.seal('whsec_other', 'hook-b');

    expect(() => secrets.open('hook-a', other)).toThrow();
    expect(() => secrets.open('hook-a', other)).toThrow();
    expect(opens()).toBe(2);
  });
});
