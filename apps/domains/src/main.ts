import 'reflect-metadata';

import { startService } from '@envoi/shared-kit';

import { AppModule } from './app.module';
import { DomainsConfig, SERVICE_NAME } from './domains.config';

startService(SERVICE_NAME, DomainsConfig, (config) => AppModule.forRoot(config));
