import { RouteStreamSubjects } from '@envoi/contracts-routes';
import {
  listenerStreamProviders,
  ListenerStreams,
  ListenerStreamStore,
} from '@envoi/shared-listener-streams';
import { Module } from '@nestjs/common';

import { ROUTES_SCHEMA } from '../database/data-source-options';
import { RouteCaller } from '../delivery/route-caller';
import { DomainOwners } from '../matching/domain-owners.service';
import { RecipientMatcher } from '../matching/recipient-matcher.service';
import { RouteMatchEvents } from '../matching/route-match-events';
import { RoutesConfig } from '../routes.config';
import { RouteStreamService } from '../stream/route-stream.service';
import { AccountDomains } from './account-domains.service';
import { DomainEventsController } from './domain-events.controller';
import { RouteSecretCipher } from './route-secret';
import { RouteTrigger } from './route-trigger.service';
import { RoutesController } from './routes.controller';
import { RoutesRepository } from './routes.repository';
import { RoutesService } from './routes.service';

@Module({
  controllers: [RoutesController],
  providers: [
    {
      provide: RouteSecretCipher,
      useFactory: (config: RoutesConfig) =>
        new RouteSecretCipher(config.ROUTE_SECRET_ENCRYPTION_KEY),
      inject: [RoutesConfig],
    },
    RoutesService,
    DomainEventsController,
    RoutesRepository,
    AccountDomains,
    RouteTrigger,
    DomainOwners,
    RecipientMatcher,
    RouteMatchEvents,
    RouteCaller,
    // Route streams' store and buffer here, where the trigger also buffers samples for them.
    ...listenerStreamProviders({
      tables: {
        schema: ROUTES_SCHEMA,
        targets: 'routes',
        events: 'route_stream_events',
        targetColumn: 'route_id',
      },
      subjects: RouteStreamSubjects,
      config: RoutesConfig,
      bufferMax: (config) => config.ROUTE_STREAM_BUFFER_MAX,
      access: RouteStreamService,
    }),
    RouteStreamService,
  ],
  exports: [
    RouteSecretCipher,
    RouteMatchEvents,
    RouteCaller,
    ListenerStreams,
    ListenerStreamStore,
    RouteStreamService,
  ],
})
export class RoutesModule {}
