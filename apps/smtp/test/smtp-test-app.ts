import path from 'node:path';

import {
  type ChildHandle,
  ensureDevCertificate,
  findFreePort,
  IsolatedPlatform,
} from '@envoi/shared-testing';

export interface SmtpInstance {
  smtp: ChildHandle;
  /** STARTTLS submission port. */
  port: number;
  /** Implicit TLS port. */
  implicitTlsPort: number;
}

export interface SmtpRig extends SmtpInstance {
  platform: IsolatedPlatform;
  /** Another replica of the smtp app on the same bus, on its own ports. */
  startReplica(): Promise<SmtpInstance>;
}

export async function startSmtp(
  platform: IsolatedPlatform,
  extraEnv: Record<string, string> = {},
): Promise<SmtpInstance> {
  const certificate = await ensureDevCertificate(path.join(platform.dir, 'tls'));
  const port = await findFreePort();
  const implicitTlsPort = await findFreePort();
  const smtp = await platform.startService(
    'smtp',
    platform.env({
      ...TEST_SMTP_SETTINGS,
      SMTP_HOST: '127.0.0.1',
      SMTP_SUBMISSION_PORTS: String(port),
      SMTP_IMPLICIT_TLS_PORT: String(implicitTlsPort),
      SMTP_TLS_CERT_FILE: certificate.certPath,
      SMTP_TLS_KEY_FILE: certificate.keyPath,
      ...extraEnv,
    }),
    { migrate: false },
  );
  return { smtp, port, implicitTlsPort };
}

/** Fast settings so that the limits can be reached within a test. */
export const TEST_SMTP_SETTINGS = {
  SMTP_IDLE_TIMEOUT_MS: '1500',
  SMTP_MAX_CONNECTIONS_PER_IP: '3',
  SMTP_AUTH_FAILURE_DELAY_MS: '100',
  SMTP_MAX_TRANSACTIONS_PER_CONNECTION: '2',
  SMTP_MAX_MESSAGE_BYTES: '65536',
  SMTP_MAX_RECIPIENTS: '3',
  RPC_TIMEOUT_MS: '1000',
  SHUTDOWN_GRACE_MS: '2000',
  // The MX has its own rig (mx-test-app.ts).
  SMTP_MX_PORT: '0',
} as const;

/**
 * The smtp app from dist/ on a private bus (its platform's other services, when a test needs
 * them, are started beside it by the test).
 */
export function useSmtpRig(
  options: {
    extraEnv?: Record<string, string>;
    /** Starts what the smtp app talks to, on the platform, before it; `after` stops it. */
    before?: (platform: IsolatedPlatform) => Promise<void>;
    after?: () => Promise<void>;
  } = {},
): () => SmtpRig {
  let rig: SmtpRig | undefined;
  let platform: IsolatedPlatform | undefined;

  beforeAll(async () => {
    await IsolatedPlatform.build();
    platform = await IsolatedPlatform.start({ owner: 'smtp' });
    await options.before?.(platform);
    const started = platform;
    const first = await startSmtp(started, options.extraEnv);
    rig = { ...first, platform: started, startReplica: () => startSmtp(started, options.extraEnv) };
  }, 120_000);

  afterAll(async () => {
    await options.after?.();
    await platform?.stop();
  }, 60_000);

  return () => {
    if (!rig) throw new Error('the smtp rig did not start');
    return rig;
  };
}
