import {
  generateSmtpPassword,
  generateSmtpUsername,
  hashSmtpPassword,
  SMTP_PASSWORD_LENGTH,
  UNMATCHABLE_SMTP_PASSWORD_HASH,
  verifySmtpPassword,
} from './smtp-password';

const FAST = { cost: 1_024, blockSize: 8, parallelization: 1 };

describe('smtp passwords', () => {
  it('generates easy-to-type unique usernames', () => {
    const usernames = new Set(Array.from({ length: 50 }, () => generateSmtpUsername()));
    expect(usernames.size).toBe(50);
    for (const username of usernames) expect(username).toMatch(/^envoi-smtp-[a-z0-9]{20}$/);
  });

  it('generates long random alphanumeric passwords', () => {
    const password = generateSmtpPassword();
    expect(password).toHaveLength(SMTP_PASSWORD_LENGTH);
    expect(password.length).toBeGreaterThanOrEqual(32);
    expect(password).toMatch(/^[A-Za-z0-9]+$/);
    expect(generateSmtpPassword()).not.toBe(password);
  });

  it('verifies the hashed password and nothing else', async () => {
    const stored = await hashSmtpPassword('correct-horse', FAST);
    expect(stored).toMatch(/^scrypt\$1024\$8\$1\$[A-Za-z0-9+/=]+\$[A-Za-z0-9+/=]+$/);
    expect(stored).not.toContain('correct-horse');
    await expect(verifySmtpPassword('correct-horse', stored)).resolves.toBe(true);
    await expect(verifySmtpPassword('correct-horsE', stored)).resolves.toBe(false);
    await expect(verifySmtpPassword('', stored)).resolves.toBe(false);
  });

  it('salts every hash', async () => {
    const first = await hashSmtpPassword('same', FAST);
    expect(await hashSmtpPassword('same', FAST)).not.toBe(first);
  });

  it('verifies with the parameters stored in the hash', async () => {
    const stored = await hashSmtpPassword('p', { cost: 2_048, blockSize: 4, parallelization: 2 });
    await expect(verifySmtpPassword('p', stored)).resolves.toBe(true);
  });

  it('matches no password against the unmatchable hash, nor a malformed one', async () => {
    await expect(verifySmtpPassword('anything', UNMATCHABLE_SMTP_PASSWORD_HASH)).resolves.toBe(
      false,
    );
    await expect(verifySmtpPassword('x', 'scrypt$0$8$1$AA==$AA==')).resolves.toBe(false);
    await expect(verifySmtpPassword('x', 'bcrypt$whatever')).resolves.toBe(false);
  });
});
