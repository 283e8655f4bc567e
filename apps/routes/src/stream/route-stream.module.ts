import { RouteStreamSubjects } from '@envoi/contracts-routes';
import { listenerStreamController } from '@envoi/shared-listener-streams';
import { Module } from '@nestjs/common';

import { RoutesModule } from '../routes/routes.module';
import { RouteStreamController } from './route-stream.controller';
import { RouteStreamFeed } from './route-stream-feed';
import { RouteStreamPurge } from './route-stream-purge.service';

/**
 * Route streams for `routes listen`-style tools (platform notes 1.12); their ListenerStreams and
 * RouteStreamService are provided by RoutesModule.
 */
@Module({
  imports: [RoutesModule],
  controllers: [RouteStreamController, listenerStreamController(RouteStreamSubjects)],
  providers: [RouteStreamFeed, RouteStreamPurge],
  exports: [RouteStreamFeed],
})
export class RouteStreamModule {}
