import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import type { DataSource } from 'typeorm';

import { ACCOUNTS_SCHEMA } from '../database/data-source-options';

/** Who of an account's members a notification is for. */
export type Audience = 'all-members' | 'administrators';

export interface Recipients {
  accountName: string;
  emails: string[];
}

const S = ACCOUNTS_SCHEMA;

/**
 * The account's name and the addresses of its members (or of its administrators only; the owner
 * is one), those without an address left out. No row: the account is gone.
 */
const RECIPIENTS_SQL = `
  SELECT a.name AS account_name,
    coalesce(array_agg(u.email ORDER BY u.email) FILTER (WHERE u.email IS NOT NULL), '{}') AS emails
  FROM ${S}.accounts a
  LEFT JOIN ${S}.members m ON m.account_id = a.id AND ($2::boolean OR m.role = 'Administrator')
  LEFT JOIN ${S}.users u ON u.id = m.user_id
  WHERE a.id = $1 AND a.deleted_at IS NULL
  GROUP BY a.id`;

@Injectable()
export class NotificationRecipientsRepository {
  constructor(@InjectDataSource() private readonly dataSource: DataSource) {}

  async find(accountId: string, audience: Audience): Promise<Recipients | null> {
    const [row] = await this.dataSource.query<Array<{ account_name: string; emails: string[] }>>(
      RECIPIENTS_SQL,
      [accountId, audience === 'all-members'],
    );
    return row ? { accountName: row.account_name, emails: row.emails } : null;
  }
}
