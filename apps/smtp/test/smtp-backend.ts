import { randomBytes } from 'node:crypto';

import { AccountsSubjects, type CreatedSmtpCredentialRecord } from '@envoi/contracts-accounts';
import { DomainsSubjects } from '@envoi/contracts-domains';
import { connectNats, RpcClient } from '@envoi/shared-nats';
import { DnsTestServer, type IsolatedPlatform } from '@envoi/shared-testing';
import type { NatsConnection } from 'nats';

/**
 * The services the smtp app talks to (accounts, domains, suppressions, messages from dist/) on
 * the rig's platform, with a loopback DNS server as the domains service's resolver, and a bus
 * client to set up accounts, domains and credentials.
 */
export class SmtpBackend {
  private dns: DnsTestServer | undefined;
  private connection: NatsConnection | undefined;
  private rpcClient: RpcClient | undefined;

  async start(platform: IsolatedPlatform): Promise<void> {
    this.dns = await DnsTestServer.start();
    const env = platform.env({
      DKIM_ENCRYPTION_KEY: randomBytes(32).toString('hex'),
      SMTP_PASSWORD_ENCRYPTION_KEY: randomBytes(32).toString('hex'),
      DNS_SERVERS: this.dns.address,
      DNS_TIMEOUT_MS: '300',
      DNS_TRIES: '1',
      DNS_RECHECK_INTERVAL_MS: '3600000',
      OUTBOX_RELAY_INTERVAL_MS: '100',
      SMTP_LOGIN_FAILURES_MAX: '6',
      TRACKING_BASE_URL: 'https://track.envoi.test',
      TRACKING_SECRET: 'tracking-secret-for-the-smtp-integration-tests',
      SHUTDOWN_GRACE_MS: '500',
    });
    await Promise.all(
      ['accounts', 'domains', 'suppressions'].map((name) => platform.startService(name, env)),
    );
    await platform.startService('messages', env);
    this.connection = await connectNats({ servers: [platform.natsUrl], name: 'smtp-test-client' });
    this.rpcClient = new RpcClient(this.connection, 30_000);
  }

  async stop(): Promise<void> {
    await this.connection?.drain();
    await this.dns?.stop();
  }

  get rpc(): RpcClient {
    if (!this.rpcClient) throw new Error('the smtp backend did not start');
    return this.rpcClient;
  }

  /** A new account with a verified sending domain. */
  async sender(): Promise<{ accountId: string; domain: string }> {
    const created = await this.rpc.request(AccountsSubjects.createAccount, { name: 'SMTP test' });
    const accountId = created.account.id;
    const name = `s${randomBytes(4).toString('hex')}.example.test`;
    const domain = await this.rpc.request(DomainsSubjects.createDomain, {
      account_id: accountId,
      body: { domain: name },
    });
    if (!this.dns) throw new Error('the smtp backend did not start');
    this.dns.publish(domain.dns_records);
    const checked = await this.rpc.request(DomainsSubjects.checkDns, {
      account_id: accountId,
      domain: name,
    });
    if (!checked.dns_valid) throw new Error(`${name} did not verify`);
    return { accountId, domain: name };
  }

  credential(
    accountId: string,
    body: { scope: 'global' | 'scoped'; domains?: string[]; sandbox?: boolean },
  ): Promise<CreatedSmtpCredentialRecord> {
    return this.rpc.request(AccountsSubjects.createSmtpCredential, {
      account_id: accountId,
      credential: { name: 'test', ...body },
    });
  }
}
