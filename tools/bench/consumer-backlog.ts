import { EVENTS_STREAM } from '@envoi/contracts-core';
import { connectNats } from '@envoi/shared-nats';

/** How the EVENTS stream's durable consumers stood, and how long they took to work off their backlog. */
export interface ConsumerBacklog {
  /** Events not yet acknowledged, summed over every consumer, when the wait began. */
  pendingAtStart: number;
  /** Left when the wait ended: 0 once every consumer caught up. */
  pendingAtEnd: number;
  waitedMs: number;
}

const POLL_MS = 100;

/**
 * Waits (at most `timeoutMs`) until every durable consumer of EVENTS has acknowledged what was
 * published: the services still working off a burst share the cores with whatever runs next.
 */
export async function waitForEventConsumers(
  natsUrl: string,
  timeoutMs: number,
  signal: AbortSignal,
): Promise<ConsumerBacklog> {
  const connection = await connectNats({
    servers: natsUrl.split(','),
    name: 'envoi-bench-consumers',
  });
  try {
    const jsm = await connection.jetstreamManager();
    const pending = async (): Promise<number> => {
      let total = 0;
      for await (const consumer of jsm.consumers.list(EVENTS_STREAM)) {
        total += consumer.num_pending + consumer.num_ack_pending;
      }
      return total;
    };
    const started = Date.now();
    const pendingAtStart = await pending();
    let left = pendingAtStart;
    while (left > 0 && Date.now() - started < timeoutMs && !signal.aborted) {
      await new Promise((resolve) => setTimeout(resolve, POLL_MS));
      left = await pending();
    }
    return { pendingAtStart, pendingAtEnd: left, waitedMs: Date.now() - started };
  } finally {
    await connection.drain();
  }
}
