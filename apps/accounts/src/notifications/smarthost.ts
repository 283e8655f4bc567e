import type SMTPTransport from 'nodemailer/lib/smtp-transport';

/** Where notifications go, and as whom. */
export interface Smarthost {
  transport: SMTPTransport.Options;
  from: string;
  /** For logs: the URL without its credentials. */
  description: string;
}

export interface SmarthostSettings {
  NOTIFICATIONS_SMTP_URL: string;
  NOTIFICATIONS_FROM: string;
  NOTIFICATIONS_SMTP_TIMEOUT_MS: number;
}

const DEFAULT_PORTS: Readonly<Record<string, number>> = { 'smtp:': 587, 'smtps:': 465 };

/**
 * The smarthost of the settings; null when none is configured (notifications are off). smtps:
 * speaks TLS from the start; smtp: upgrades with STARTTLS whenever the server offers it, the
 * certificate verified either way. Throws on a URL or From no mail could go out with.
 */
export function smarthostOf(settings: SmarthostSettings): Smarthost | null {
  if (settings.NOTIFICATIONS_SMTP_URL === '') return null;
  const url = new URL(settings.NOTIFICATIONS_SMTP_URL);
  const defaultPort = DEFAULT_PORTS[url.protocol];
  if (defaultPort === undefined || url.hostname === '') {
    throw new Error('NOTIFICATIONS_SMTP_URL must be smtp://[user:pass@]host[:port] or smtps://…');
  }
  if (settings.NOTIFICATIONS_FROM.trim() === '') {
    throw new Error('NOTIFICATIONS_FROM is required with NOTIFICATIONS_SMTP_URL');
  }
  const port = url.port === '' ? defaultPort : Number(url.port);
  const host = url.hostname.replace(/^\[(.*)\]$/, '$1');
  const timeout = settings.NOTIFICATIONS_SMTP_TIMEOUT_MS;
  return {
    transport: {
      host,
      port,
      secure: url.protocol === 'smtps:',
      ...(url.username === ''
        ? {}
        : {
            auth: {
              user: decodeURIComponent(url.username),
              pass: decodeURIComponent(url.password),
            },
          }),
      connectionTimeout: timeout,
      greetingTimeout: timeout,
      socketTimeout: timeout,
      dnsTimeout: timeout,
    },
    from: settings.NOTIFICATIONS_FROM.trim(),
    description: `${url.protocol}//${url.host}`,
  };
}
