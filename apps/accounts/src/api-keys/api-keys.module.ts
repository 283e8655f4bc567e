import { Module } from '@nestjs/common';

import { ApiKeyEvents } from './api-key-events';
import { ApiKeysController } from './api-keys.controller';
import { ApiKeysService } from './api-keys.service';
import { DomainEventsController } from './domain-events.controller';
import { DomainScopesService } from './domain-scopes.service';

@Module({
  controllers: [ApiKeysController],
  providers: [ApiKeysService, ApiKeyEvents, DomainScopesService, DomainEventsController],
  exports: [ApiKeysService],
})
export class ApiKeysModule {}
