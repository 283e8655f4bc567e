import { Module } from '@nestjs/common';

import { AttemptWrites } from '../attempts/attempt-writes';
import { AttemptsRepository } from '../attempts/attempts.repository';
import { ClaimKeeper } from '../attempts/claim-keeper';
import { DeliveryConfig } from '../delivery.config';
import { SenderKeys } from '../senders/sender-keys.service';
import { createRoutingDns, MxResolver } from '../smtp/mx-resolver';
import { SmtpPool } from '../smtp/smtp-pool';
import { SmtpSender } from '../smtp/smtp-sender';
import { AccountHolds } from './account-holds';
import { DeliveryService, MX_RESOLVER, SMTP_SENDER } from './delivery.service';
import { DeliveryWorker } from './delivery-worker';
import { MessageViews } from './message-views';

@Module({
  providers: [
    AccountHolds,
    AttemptsRepository,
    AttemptWrites,
    ClaimKeeper,
    SenderKeys,
    MessageViews,
    {
      provide: MX_RESOLVER,
      useFactory: (config: DeliveryConfig) =>
        new MxResolver(
          createRoutingDns({
            servers: config.dnsServers(),
            timeoutMs: config.DNS_TIMEOUT_MS,
            tries: config.DNS_TRIES,
          }),
          {
            cache: {
              maxTtlMs: config.MX_CACHE_MAX_TTL_MS,
              negativeTtlMs: config.MX_NEGATIVE_CACHE_MS,
              maxEntries: config.MX_CACHE_MAX_ENTRIES,
            },
          },
        ),
      inject: [DeliveryConfig],
    },
    {
      provide: SmtpPool,
      useFactory: (config: DeliveryConfig) =>
        new SmtpPool({
          port: config.SMTP_OUTBOUND_PORT,
          heloName: config.SMTP_HELO_NAME,
          tlsPolicy: config.SMTP_TLS_POLICY,
          maxConnectionsPerHost: config.SMTP_MAX_CONNECTIONS_PER_HOST,
          maxMessagesPerConnection: config.SMTP_MAX_MESSAGES_PER_CONNECTION,
          idleMs: config.SMTP_POOL_IDLE_MS,
          connectTimeoutMs: config.SMTP_CONNECT_TIMEOUT_MS,
          socketTimeoutMs: config.SMTP_SOCKET_TIMEOUT_MS,
        }),
      inject: [DeliveryConfig],
    },
    {
      provide: SMTP_SENDER,
      useFactory: (pool: SmtpPool, config: DeliveryConfig) =>
        new SmtpSender(pool, {
          maxAddresses: config.SMTP_MAX_ADDRESSES,
          plainFallback: config.SMTP_TLS_POLICY === 'opportunistic',
        }),
      inject: [SmtpPool, DeliveryConfig],
    },
    DeliveryService,
    DeliveryWorker,
  ],
  exports: [DeliveryWorker, SmtpPool],
})
export class DeliveryModule {}
