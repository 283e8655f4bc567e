import 'reflect-metadata';

import { startService } from '@envoi/shared-kit';

import { AppModule } from './app.module';
import { DeliveryConfig, SERVICE_NAME } from './delivery.config';

startService(SERVICE_NAME, DeliveryConfig, (config) => AppModule.forRoot(config));
