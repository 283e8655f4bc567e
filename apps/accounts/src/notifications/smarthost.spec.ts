import { smarthostOf } from './smarthost';

const settings = (url: string, from = 'Envoi <no-reply@envoi.example>') => ({
  NOTIFICATIONS_SMTP_URL: url,
  NOTIFICATIONS_FROM: from,
  NOTIFICATIONS_SMTP_TIMEOUT_MS: 5_000,
});

describe('smarthostOf', () => {
  it('is null without a URL: notifications are off', () => {
    expect(smarthostOf(settings(''))).toBeNull();
  });

  it('reads host, port and decoded credentials of an smtp URL, STARTTLS left to the offer', () => {
    const smarthost = smarthostOf(settings('smtp://us%40er:p%3Ass@mail.example:2525'));
    expect(smarthost?.transport).toMatchObject({
      host: 'mail.example',
      port: 2525,
      secure: false,
      auth: { user: 'us@er', pass: 'p:ss' },
      connectionTimeout: 5_000,
      greetingTimeout: 5_000,
      socketTimeout: 5_000,
    });
    expect(smarthost?.description).toBe('smtp://mail.example:2525');
    expect(smarthost?.from).toBe('Envoi <no-reply@envoi.example>');
  });

  it('speaks TLS at once for smtps, on 465 by default; no auth without a user', () => {
    const smarthost = smarthostOf(settings('smtps://mail.example'));
    expect(smarthost?.transport).toMatchObject({ port: 465, secure: true });
    expect(smarthost?.transport.auth).toBeUndefined();
    expect(smarthostOf(settings('smtp://[::1]'))?.transport).toMatchObject({
      host: '::1',
      port: 587,
    });
  });

  it('refuses another scheme, and a smarthost without a From', () => {
    expect(() => smarthostOf(settings('http://mail.example'))).toThrow(/smtp:\/\//);
    expect(() => smarthostOf(settings('smtp://mail.example', ' '))).toThrow(/NOTIFICATIONS_FROM/);
  });
});
