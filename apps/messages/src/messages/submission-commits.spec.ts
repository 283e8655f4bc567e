import { type MessageReceptionEvent, MessagesStreamSubjects } from '@envoi/contracts-messages';
import { type OutboxEntry, outboxEntry } from '@envoi/shared-outbox';

import { firstDeliveryJob } from './delivery-chunks';
import { type InsertStatement, rowArraysStatement } from './insert-rows';
import { submissionCommits } from './submission-commits';

const ACCOUNT = '4cdd7bdd-294e-4762-892f-83d40abf5a87';
const OTHER_ACCOUNT = '0f6d5e0c-7a39-4c52-9d0e-3c1b7f2e8a41';

function reception(id: string, account = ACCOUNT): MessageReceptionEvent {
  return {
    id: `event-${id}`,
    type: 'message.reception',
    timestamp: '2026-11-26T14:00:00.000Z',
    data: {
      account_id: account,
      event: 'on_reception',
      from: 'sender@example.com',
      recipient: `${id}@example.net`,
      subject: 'Hello',
      message_id_header: `<${id}@example.com>`,
      id,
      is_bot: false,
    },
  };
}

/** Outbox rows as one row-array INSERT of their payloads, as the service writes them. */
function outboxRows(entries: readonly OutboxEntry[]): InsertStatement {
  return rowArraysStatement({
    sql: 'INSERT INTO outbox (payload) SELECT * FROM unnest($1::json[])',
    parameters: [entries.map((entry) => entry.payload)],
  });
}

/** A submission's own rows: a message and its delivery job in the outbox. */
function ownRows(id: string): InsertStatement[] {
  return [
    { sql: 'INSERT INTO messages (id) VALUES ($1)', parameters: [id] },
    outboxRows([
      outboxEntry(
        MessagesStreamSubjects.deliveryJobs,
        `job-${id}`,
        firstDeliveryJob([id], ACCOUNT),
      ),
    ]),
  ];
}

interface Payload {
  type?: string;
  data?: { account_id: string; events: MessageReceptionEvent[] };
  message_id?: string;
}

/**
 * What a statement run wrote to the outbox (its one array parameter, the outbox rows merged):
 * batches as their events' message ids.
 */
function outboxOf(statement: InsertStatement | undefined): Array<string | string[]> {
  const payloads = (statement?.parameters.find(Array.isArray) ?? []) as Payload[];
  return payloads.map((payload) =>
    payload.type === 'message.reception_batch'
      ? (payload.data?.events ?? []).map((event) => event.data.id)
      : `job ${payload.message_id ?? ''}`,
  );
}

function setup(failures = 0) {
  const executed: InsertStatement[] = [];
  let failing = failures;
  const commits = submissionCommits((statement) => {
    executed.push(statement);
    if (failing > 0) {
      failing -= 1;
      return Promise.reject(new Error('duplicate key'));
    }
    return Promise.resolve();
  }, outboxRows);
  return { executed, commits };
}

describe('submissionCommits', () => {
  it("writes the receptions of a group's submissions in one reception batch, ahead of their rows", async () => {
    const { executed, commits } = setup();
    await Promise.all([
      commits.commit(ownRows('a'), [reception('a1'), reception('a2')]),
      commits.commit(ownRows('b'), [reception('b1')]),
      commits.commit(ownRows('c'), [reception('c1')]),
    ]);
    expect(executed).toHaveLength(1);
    expect(outboxOf(executed[0])).toEqual([['a1', 'a2', 'b1', 'c1'], 'job a', 'job b', 'job c']);
  });

  it('gives each account of a group its own reception batch', async () => {
    const { executed, commits } = setup();
    await Promise.all([
      commits.commit(ownRows('a'), [reception('a1')]),
      commits.commit(ownRows('b'), [reception('b1', OTHER_ACCOUNT)]),
      commits.commit(ownRows('c'), [reception('c1')]),
    ]);
    expect(outboxOf(executed[0])).toEqual([['a1', 'c1'], ['b1'], 'job a', 'job b', 'job c']);
  });

  it('writes a reception batch per submission when a failed group runs each alone', async () => {
    const { executed, commits } = setup(1);
    await Promise.all([
      commits.commit(ownRows('a'), [reception('a1')]),
      commits.commit(ownRows('b'), [reception('b1'), reception('b2')]),
    ]);
    expect(executed.slice(1).map(outboxOf)).toEqual([
      [['a1'], 'job a'],
      [['b1', 'b2'], 'job b'],
    ]);
  });

  it('writes no reception batch for a submission that stored no message', async () => {
    const { executed, commits } = setup();
    await commits.commit(ownRows('a'));
    expect(outboxOf(executed[0])).toEqual(['job a']);
  });
});
