import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource, In } from 'typeorm';

import { SmtpLoginFailureEntity } from './smtp-credential.entity';
import { afterFailure, type FailureCount, type ThrottleSettings } from './smtp-login-throttle';

/** Failed SMTP login counts (accounts.smtp_login_failures), shared by every replica. */
@Injectable()
export class SmtpLoginFailuresRepository {
  constructor(@InjectDataSource() private readonly dataSource: DataSource) {}

  find(subjects: readonly string[]): Promise<FailureCount[]> {
    return this.dataSource.manager.find(SmtpLoginFailureEntity, {
      where: { subject: In([...subjects]) },
    });
  }

  /** Counts one failure for each subject, each row locked while it moves on. */
  async recordFailure(
    subjects: readonly string[],
    now: Date,
    settings: ThrottleSettings,
  ): Promise<void> {
    await this.dataSource.transaction(async (manager) => {
      await manager
        .createQueryBuilder()
        .insert()
        .into(SmtpLoginFailureEntity)
        .values(subjects.map((subject) => ({ subject, windowStartedAt: now, failures: 0 })))
        .orIgnore()
        .execute();
      const counts = await manager.find(SmtpLoginFailureEntity, {
        where: { subject: In([...subjects]) },
        order: { subject: 'ASC' },
        lock: { mode: 'pessimistic_write' },
      });
      for (const count of counts) {
        const next = afterFailure(count, now, settings);
        await manager.update(SmtpLoginFailureEntity, { subject: count.subject }, next);
      }
    });
  }

  /** Forgets up to `limit` counts whose window and block have both run out; answers how many. */
  async purgeExpired(now: Date, windowMs: number, limit: number): Promise<number> {
    const rows: unknown[] = await this.dataSource.query(
      `DELETE FROM accounts.smtp_login_failures WHERE subject IN (
         SELECT subject FROM accounts.smtp_login_failures
         WHERE window_started_at <= $1 AND (blocked_until IS NULL OR blocked_until <= $2)
         LIMIT $3)
       RETURNING 1`,
      [new Date(now.getTime() - windowMs), now, limit],
    );
    return rows.length;
  }
}
