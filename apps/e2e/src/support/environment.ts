/** What the global setup hands to every spec, through the environment of the jest workers. */
export interface E2eEnvironment {
  baseUrl: string;
  natsUrl: string;
  caFile: string;
  httpsPort: number;
  /** The client IP a trusted proxy may vouch for with X-Forwarded-For. */
  trustedProxyIp: string;
  /** The loopback DNS server the platform resolves through (`host:port`) and its zone file. */
  dnsServer: string;
  dnsZoneFile: string;
  /** Where the recipients' MX (an SMTP sink on loopback) writes what it receives, one JSON each. */
  smtpReceiptsDir: string;
  /** Where the notifications' smarthost (another SMTP sink) writes what it receives. */
  notificationReceiptsDir: string;
  /** Each service's health endpoints: base URL by service name. */
  health: Record<string, string>;
  /** SMTP submission (STARTTLS, the same certificate as the gateway). */
  smtpSubmission: { host: string; port: number };
  /** The MX (inbound mail) and the address complaints go to. */
  smtpMx: { host: string; port: number; feedback_address: string };
  /** The environment the platform's services run with, to start extra replicas. */
  serviceEnv: Record<string, string>;
}

const VARIABLE = 'ENVOI_E2E_ENVIRONMENT';

export function exportE2eEnvironment(environment: E2eEnvironment): void {
  process.env[VARIABLE] = JSON.stringify(environment);
}

export function e2eEnvironment(): E2eEnvironment {
  const raw = process.env[VARIABLE];
  if (!raw) throw new Error('the e2e global setup did not run');
  return JSON.parse(raw) as E2eEnvironment;
}
