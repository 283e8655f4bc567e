import { RouteStreamSubjects } from '@envoi/contracts-routes';
import { listenerStreamController, listenerStreamProviders } from '@envoi/shared-listener-streams';
import { Module } from '@nestjs/common';

import { ROUTES_SCHEMA } from '../database/data-source-options';
import { RoutesConfig } from '../routes.config';
import { RoutesModule } from '../routes/routes.module';
import { RouteStreamController } from './route-stream.controller';
import { RouteStreamService } from './route-stream.service';
import { RouteStreamFeed } from './route-stream-feed';
import { RouteStreamPurge } from './route-stream-purge.service';

/** Route streams for `routes listen`-style tools (platform notes 1.12). */
@Module({
  imports: [RoutesModule],
  controllers: [RouteStreamController, listenerStreamController(RouteStreamSubjects)],
  providers: [
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
    RouteStreamFeed,
    RouteStreamPurge,
  ],
  exports: [RouteStreamFeed],
})
export class RouteStreamModule {}
