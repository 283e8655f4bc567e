import { Module } from '@nestjs/common';

import { RouteCaller } from '../delivery/route-caller';
import { DomainOwners } from '../matching/domain-owners.service';
import { RecipientMatcher } from '../matching/recipient-matcher.service';
import { RoutesConfig } from '../routes.config';
import { AccountDomains } from './account-domains.service';
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
    RoutesRepository,
    AccountDomains,
    RouteTrigger,
    DomainOwners,
    RecipientMatcher,
    RouteCaller,
  ],
  exports: [RouteSecretCipher, RouteCaller, RoutesService],
})
export class RoutesModule {}
