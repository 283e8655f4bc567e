import { findFreePort, IsolatedPlatform } from '@envoi/shared-testing';

import { type SmtpInstance, startSmtp } from './smtp-test-app';

export const MX_BOUNCE_DOMAIN = 'bounces.mx-test.example';
export const MX_FEEDBACK_ADDRESS = 'complaints@bounces.mx-test.example';
export const MX_MAX_MESSAGE_BYTES = 65_536;

export interface MxRig {
  platform: IsolatedPlatform;
  /** The smtp app serving the MX (replaced by `restart`). */
  smtp: SmtpInstance;
  mxPort: number;
  /** Starts the smtp app again on the same MX port (after a kill). */
  restart(): Promise<void>;
}

/** The smtp app from dist/ with its MX on a free loopback port, on a private bus. */
export function useMxRig(): () => MxRig {
  let rig: MxRig | undefined;
  let platform: IsolatedPlatform | undefined;

  beforeAll(async () => {
    await IsolatedPlatform.build();
    const started = await IsolatedPlatform.start({ owner: 'smtp' });
    platform = started;
    const mxPort = await findFreePort();
    const env = {
      SMTP_MX_PORT: String(mxPort),
      SMTP_MX_BOUNCE_DOMAIN: MX_BOUNCE_DOMAIN,
      SMTP_MX_FEEDBACK_ADDRESS: MX_FEEDBACK_ADDRESS,
      SMTP_MX_MAX_MESSAGE_BYTES: String(MX_MAX_MESSAGE_BYTES),
    };
    const current: MxRig = {
      platform: started,
      smtp: await startSmtp(started, env),
      mxPort,
      restart: async () => {
        current.smtp = await startSmtp(started, env);
      },
    };
    rig = current;
  }, 120_000);

  afterAll(async () => {
    await platform?.stop();
  }, 60_000);

  return () => {
    if (!rig) throw new Error('the mx rig did not start');
    return rig;
  };
}
