import { randomBytes } from 'node:crypto';

import { generateRouteSecret, RouteSecretCipher } from './route-secret';

const ROUTE = '7d9f3c52-0d7b-4f3e-9a43-2b1f6f0c9e11';
const OTHER_ROUTE = '0b8e4a7c-3f2d-4c1b-8e5a-9d6c7b4a3e21';

describe('RouteSecretCipher', () => {
  const cipher = new RouteSecretCipher(randomBytes(32).toString('hex'));

  it('opens what it sealed, again from what it kept', () => {
    const secret = generateRouteSecret();
    const route = { id: ROUTE, secretCiphertext: cipher.seal(secret, ROUTE) };
    expect(cipher.open(route)).toBe(secret);
    expect(cipher.open(route)).toBe(secret);
  });

  it("opens a route's new secret, not the one it kept before", () => {
    const first = generateRouteSecret();
    const second = generateRouteSecret();
    expect(cipher.open({ id: ROUTE, secretCiphertext: cipher.seal(first, ROUTE) })).toBe(first);
    expect(cipher.open({ id: ROUTE, secretCiphertext: cipher.seal(second, ROUTE) })).toBe(second);
  });

  it("refuses a secret sealed for another route, even once that route's is kept", () => {
    const sealed = cipher.seal(generateRouteSecret(), ROUTE);
    cipher.open({ id: ROUTE, secretCiphertext: sealed });
    expect(() => cipher.open({ id: OTHER_ROUTE, secretCiphertext: sealed })).toThrow();
  });
});
