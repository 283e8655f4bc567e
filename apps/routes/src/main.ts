import 'reflect-metadata';

import { startService } from '@envoi/shared-kit';

import { AppModule } from './app.module';
import { RoutesConfig, SERVICE_NAME } from './routes.config';

startService(SERVICE_NAME, RoutesConfig, (config) => AppModule.forRoot(config));
