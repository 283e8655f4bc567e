import { Module } from '@nestjs/common';

import { DkimKeyCipher } from '../dkim/dkim-key-cipher';
import { createDnsClient } from '../dns/dns-client';
import { DnsLookup } from '../dns/dns-lookup';
import { DnsVerifier } from '../dns/dns-verifier';
import { DnsCheckService } from '../dns-checks/dns-check.service';
import { DnsMonitorService } from '../dns-checks/dns-monitor.service';
import { DomainsConfig } from '../domains.config';
import type { DnsEndpoints } from './dns-records';
import { DomainEvents } from './domain-events';
import { DNS_ENDPOINTS } from './domains.constants';
import { DomainsController } from './domains.controller';
import { DomainsRepository } from './domains.repository';
import { DomainsService } from './domains.service';

@Module({
  controllers: [DomainsController],
  providers: [
    {
      provide: DNS_ENDPOINTS,
      useFactory: (config: DomainsConfig): DnsEndpoints => ({
        spfInclude: config.SPF_INCLUDE_DOMAIN,
        returnPathTarget: config.RETURN_PATH_TARGET,
        trackingTarget: config.TRACKING_TARGET,
        inboundMxHost: config.INBOUND_MX_HOST,
      }),
      inject: [DomainsConfig],
    },
    {
      provide: DkimKeyCipher,
      useFactory: (config: DomainsConfig) => new DkimKeyCipher(config.DKIM_ENCRYPTION_KEY),
      inject: [DomainsConfig],
    },
    {
      provide: DnsVerifier,
      useFactory: (config: DomainsConfig) =>
        new DnsVerifier(
          new DnsLookup(
            createDnsClient({
              servers: config.dnsServers(),
              timeoutMs: config.DNS_TIMEOUT_MS,
              tries: config.DNS_TRIES,
            }),
          ),
        ),
      inject: [DomainsConfig],
    },
    DomainEvents,
    DomainsService,
    DomainsRepository,
    DnsCheckService,
    DnsMonitorService,
  ],
})
export class DomainsModule {}
