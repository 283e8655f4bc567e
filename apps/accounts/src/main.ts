import 'reflect-metadata';

import { startService } from '@envoi/shared-kit';

import { AccountsConfig, SERVICE_NAME } from './accounts.config';
import { AppModule } from './app.module';

startService(SERVICE_NAME, AccountsConfig, (config) => AppModule.forRoot(config));
