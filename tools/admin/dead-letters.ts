import { parseArgs } from 'node:util';

import {
  DEAD_LETTER_ADMIN_SUBJECTS,
  type DeadLetterListReply,
  type DeadLetterReplayReply,
} from '@envoi/shared-nats';
import { createInbox, JSONCodec, type NatsConnection } from 'nats';

/** How long the services get to answer (each service's first replica answers at once). */
const ANSWER_WINDOW_MS = 1_500;

const codec = JSONCodec();

/** Asks every service that keeps dead letters; answers what arrived within the window. */
async function gather<R>(
  connection: NatsConnection,
  subject: string,
  request: object,
): Promise<R[]> {
  const inbox = createInbox();
  const replies: R[] = [];
  const subscription = connection.subscribe(inbox);
  const timer = setTimeout(() => subscription.unsubscribe(), ANSWER_WINDOW_MS);
  connection.publish(subject, codec.encode(request), { reply: inbox });
  for await (const message of subscription) replies.push(codec.decode(message.data) as R);
  clearTimeout(timer);
  return replies;
}

/** `dead-letters list [--service NAME] [--json]`: the most recent first, per service. */
export async function listDeadLetters(connection: NatsConnection, args: string[]): Promise<void> {
  const { values } = parseArgs({
    args,
    options: { service: { type: 'string' }, json: { type: 'boolean', default: false } },
    strict: true,
  });
  const replies = (
    await gather<DeadLetterListReply>(connection, DEAD_LETTER_ADMIN_SUBJECTS.list, {})
  )
    .filter((reply) => !values.service || reply.service === values.service)
    .sort((a, b) => a.service.localeCompare(b.service));
  if (values.json) {
    console.log(JSON.stringify(replies));
    return;
  }
  for (const { service, dead_letters } of replies) {
    console.log(`${service}: ${dead_letters.length} dead letter(s)`);
    for (const letter of dead_letters) {
      console.log(
        `  ${letter.id}  ${letter.failed_at}  ${letter.durable}  ${letter.subject}  ` +
          `deliveries=${letter.deliveries}  request=${letter.request_id ?? '-'}  error: ${letter.error}`,
      );
    }
  }
}

/** `dead-letters replay <id>`: hands the dead letter to its handler again. */
export async function replayDeadLetter(connection: NatsConnection, args: string[]): Promise<void> {
  const { positionals } = parseArgs({ args, allowPositionals: true, strict: true });
  const [id] = positionals;
  if (!id || positionals.length !== 1) throw new ReplayUsageError('give one dead letter id');
  const replies = await gather<DeadLetterReplayReply>(
    connection,
    DEAD_LETTER_ADMIN_SUBJECTS.replay,
    { id },
  );
  const found = replies.find((reply) => reply.found);
  if (!found) throw new Error(`no dead letter ${id}`);
  if (found.outcome !== 'acked') {
    throw new Error(`${found.service}: dead letter ${id} failed again (${found.outcome}); kept`);
  }
  console.log(`${found.service}: dead letter ${id} handled and removed`);
}

export class ReplayUsageError extends Error {}
