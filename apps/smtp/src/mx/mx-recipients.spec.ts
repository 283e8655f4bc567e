import { classifyRecipient } from './mx-recipients';

const MAILBOXES = { bounceDomain: 'bounces.envoi.test', feedbackAddress: 'fbl@bounces.envoi.test' };
const UUID = '0b5c7d3e-1f2a-4b6c-8d9e-0a1b2c3d4e5f';

describe('classifyRecipient', () => {
  it('takes a VERP bounce address on the bounce domain, with its message uuid', () => {
    expect(classifyRecipient(`Bounce+${UUID.toUpperCase()}@Bounces.Envoi.Test`, MAILBOXES)).toEqual(
      {
        kind: 'bounce',
        address: `bounce+${UUID}@bounces.envoi.test`,
        messageUuid: UUID,
      },
    );
  });

  it('refuses anything else on the bounce domain', () => {
    expect(classifyRecipient('bounce+nope@bounces.envoi.test', MAILBOXES)).toEqual({
      kind: 'refused',
    });
    expect(classifyRecipient('postmaster@bounces.envoi.test', MAILBOXES)).toEqual({
      kind: 'refused',
    });
  });

  it('takes the feedback address whatever its case', () => {
    expect(classifyRecipient('FBL@bounces.envoi.test', MAILBOXES)).toEqual({
      kind: 'feedback',
      address: 'fbl@bounces.envoi.test',
    });
  });

  it('leaves a plain address of another domain to the routes', () => {
    expect(classifyRecipient('Support@Example.com.', MAILBOXES)).toEqual({
      kind: 'candidate',
      address: 'support@example.com',
    });
  });

  it('leaves a VERP address on another host to the return-path question', () => {
    expect(classifyRecipient(`bounce+${UUID}@rp.example.com`, MAILBOXES)).toEqual({
      kind: 'verp',
      address: `bounce+${UUID}@rp.example.com`,
      messageUuid: UUID,
      host: 'rp.example.com',
    });
  });

  it.each([
    ['a %-hack', 'u%victim.example@example.com'],
    ['a bang path', 'victim.example!u@example.com'],
    ['a source route', '@a.example,@b.example:u@example.com'],
    ['a source route with one hop', '@a.example:u@example.com'],
    ['a quoted @', '"u@victim.example"@example.com'],
    ['a quoted local part', '"u"@example.com'],
    ['no domain', 'postmaster'],
    ['an empty local part', '@example.com'],
    ['a single-label domain', 'u@localhost'],
    ['an address literal', 'u@[127.0.0.1]'],
    ['a local part over 64 octets', `${'a'.repeat(65)}@example.com`],
  ])('refuses %s', (_name, address) => {
    expect(classifyRecipient(address, MAILBOXES)).toEqual({ kind: 'refused' });
  });
});
