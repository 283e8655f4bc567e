import path from 'node:path';

import { serviceDataSourceOptions } from '@envoi/shared-database';
import { DeadLetterEntity } from '@envoi/shared-outbox';
import type { DataSourceOptions } from 'typeorm';

import { AccountEntity } from '../accounts/account.entity';
import { ApiKeyEntity } from '../api-keys/api-key.entity';
import { ApiKeyScopeEntity } from '../api-keys/api-key-scope.entity';
import { DeletedDomainEntity } from '../api-keys/deleted-domain.entity';
import { MemberEntity } from '../members/member.entity';
import {
  SmtpCredentialDomainEntity,
  SmtpCredentialEntity,
  SmtpLoginFailureEntity,
} from '../smtp-credentials/smtp-credential.entity';
import { UserEntity } from '../users/user.entity';

export const ACCOUNTS_SCHEMA = 'accounts';

export const ACCOUNTS_ENTITIES = [
  DeadLetterEntity,
  AccountEntity,
  UserEntity,
  MemberEntity,
  ApiKeyEntity,
  ApiKeyScopeEntity,
  DeletedDomainEntity,
  SmtpCredentialEntity,
  SmtpCredentialDomainEntity,
  SmtpLoginFailureEntity,
];

/**
 * Migrations are picked up from their folder: `.ts` under jest, `.js` once compiled into dist/.
 * Only `<epoch>-<PascalName>` files match, never source maps.
 */
const MIGRATIONS = path.join(__dirname, 'migrations', '[0-9]*-*.{ts,js}');

/** The accounts schema's DataSource options, shared by the app, the migration job and the CLI. */
export function accountsDataSourceOptions(url: string, poolSize?: number): DataSourceOptions {
  return serviceDataSourceOptions({
    url,
    schema: ACCOUNTS_SCHEMA,
    entities: ACCOUNTS_ENTITIES,
    migrations: [MIGRATIONS],
    ...(poolSize === undefined ? {} : { poolSize }),
  });
}
