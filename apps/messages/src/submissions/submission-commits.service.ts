import { preparedQuery } from '@envoi/shared-database';
import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource } from 'typeorm';

import type { InsertStatement } from '../messages/insert-rows';
import { KeyedBatches } from '../messages/keyed-batches';

/** Submissions committed together at most. */
const BATCH_MAX = 32;
/** Every submission of this replica shares one queue. */
const QUEUE = 'submissions';

/** The statements of a batch that failed, with their errors; the others committed. */
type Failures = Map<InsertStatement, unknown>;

/**
 * Commits the one statement of each SMTP submission. Submissions that arrive while a commit is
 * in flight are committed together once it ends, in one transaction (one commit, one connection):
 * under load the commits are shared, when idle a submission goes at once. When a batch fails (a
 * repeated submission's key, say), each of its statements runs again alone, so only the one at
 * fault fails. A caller's promise settles once its statement is committed.
 */
@Injectable()
export class SubmissionCommits {
  private readonly batches = new KeyedBatches<InsertStatement, Failures>(
    (_queue, statements) => this.commitAll(statements),
    BATCH_MAX,
  );

  constructor(@InjectDataSource() private readonly dataSource: DataSource) {}

  async commit(statement: InsertStatement): Promise<void> {
    const failures = await this.batches.submit(QUEUE, [statement]);
    if (failures.has(statement)) throw failures.get(statement);
  }

  private async commitAll(statements: readonly InsertStatement[]): Promise<Failures> {
    if (statements.length > 1 && (await this.commitTogether(statements))) return new Map();
    const failures: Failures = new Map();
    await Promise.all(
      statements.map(async (statement) => {
        try {
          await preparedQuery(this.dataSource.manager, statement.sql, statement.parameters);
        } catch (error) {
          failures.set(statement, error);
        }
      }),
    );
    return failures;
  }

  /** False when the transaction failed (nothing of it is committed). */
  private async commitTogether(statements: readonly InsertStatement[]): Promise<boolean> {
    try {
      await this.dataSource.transaction(async (manager) => {
        for (const statement of statements) {
          await preparedQuery(manager, statement.sql, statement.parameters);
        }
      });
      return true;
    } catch {
      return false;
    }
  }
}
