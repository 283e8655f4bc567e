import 'reflect-metadata';

import { startService } from '@envoi/shared-kit';

import { AppModule } from './app.module';
import { SERVICE_NAME, WebhooksConfig } from './webhooks.config';

startService(SERVICE_NAME, WebhooksConfig, (config) => AppModule.forRoot(config));
