import 'reflect-metadata';

import { startService } from '@envoi/shared-kit';

import { AppModule } from './app.module';
import { SERVICE_NAME, SuppressionsConfig } from './suppressions.config';

startService(SERVICE_NAME, SuppressionsConfig, (config) => AppModule.forRoot(config));
