import { bounceAddress, messageIdOfBounceAddress } from './verp';

const ID = '0190f3a2-7c1e-7d3a-9b2c-1234567890ab';

describe('bounceAddress', () => {
  it('is a per-message address on the verified return-path host', () => {
    expect(bounceAddress(ID, 'rp.example.com', 'bounces.envoi.test')).toBe(
      `bounce+${ID}@rp.example.com`,
    );
  });

  it("falls back to the platform's bounce host while the return path is not verified", () => {
    expect(bounceAddress(ID.toUpperCase(), null, 'Bounces.Envoi.Test.')).toBe(
      `bounce+${ID}@bounces.envoi.test`,
    );
  });

  it('refuses what is not a message uuid', () => {
    expect(() => bounceAddress('x@y', null, 'bounces.envoi.test')).toThrow('not a message uuid');
  });

  it('reads the message id back', () => {
    expect(messageIdOfBounceAddress(`bounce+${ID}@rp.example.com`)).toBe(ID);
    expect(messageIdOfBounceAddress(`Bounce+${ID.toUpperCase()}@x.test`)).toBe(ID);
    expect(messageIdOfBounceAddress('postmaster@x.test')).toBeNull();
    expect(messageIdOfBounceAddress('bounce+nope@x.test')).toBeNull();
  });
});
