import 'reflect-metadata';

import { startService } from '@envoi/shared-kit';

import { AppModule } from './app.module';
import { MessagesConfig, SERVICE_NAME } from './messages.config';

startService(SERVICE_NAME, MessagesConfig, (config) => AppModule.forRoot(config));
