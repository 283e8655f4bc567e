import { createInbox, headers, type Msg, type NatsConnection, type Subscription } from 'nats';

/** One message for a JetStream stream. */
export interface StreamPublication {
  subject: string;
  data: Uint8Array;
  /** Its `Nats-Msg-Id`: the stream drops a second message with the same id within its window. */
  msgId: string;
  /** The stream that must take it (`Nats-Expected-Stream`). */
  stream: string;
  /** More headers (a trace context). */
  headers?: Record<string, string> | null;
}

/** How the stream answered a publication (JetStream's PubAck, or its error). */
interface PubAckBody {
  error?: { code?: number; description?: string };
}

const decoder = new TextDecoder();

/** The stream's answer as an outcome: an error for a refusal, a status or no answer. */
export function pubAckError(message: Pick<Msg, 'data' | 'headers'>): Error | undefined {
  const status = message.headers?.code ?? 0;
  if (status !== 0 && status !== 200) {
    return new Error(`no stream took the message: ${status} ${message.headers?.description ?? ''}`);
  }
  let ack: PubAckBody;
  try {
    ack = JSON.parse(decoder.decode(message.data)) as PubAckBody;
  } catch {
    return new Error('the stream answered with something that is not a PubAck');
  }
  if (ack.error) {
    return new Error(
      `the stream refused the message: ${ack.error.code ?? ''} ${ack.error.description ?? ''}`,
    );
  }
  return undefined;
}

/**
 * Publishes messages to JetStream back to back, each with its reply subject on one subscription
 * of the publisher's, and waits for the acknowledgements together under one timer: what
 * `jetstream().publish` does per message (a request, its timer and its error objects) costs more
 * than the message. Sent in order on one connection, so the stream stores them in that order.
 */
export class StreamPublisher {
  private subscription: Subscription | undefined;
  private prefix = '';
  private nextToken = 0;
  private readonly waiting = new Map<string, (error: Error | undefined) => void>();

  constructor(private readonly connection: NatsConnection) {}

  /**
   * Publishes them in order; an outcome per message, in the same order: fulfilled once the stream
   * stored it (or dropped it as a duplicate), rejected when it refused it or did not answer within
   * `timeoutMs`.
   */
  async publishAll(
    publications: readonly StreamPublication[],
    timeoutMs: number,
  ): Promise<Array<PromiseSettledResult<void>>> {
    this.subscribe();
    const outcomes = publications.map((publication) => this.publish(publication));
    let timer: NodeJS.Timeout | undefined;
    const timedOut = new Promise<void>((resolve) => {
      timer = setTimeout(resolve, timeoutMs);
    });
    try {
      await Promise.race([Promise.allSettled(outcomes.map(({ acked }) => acked)), timedOut]);
    } finally {
      clearTimeout(timer);
    }
    for (const { token } of outcomes) {
      this.waiting.get(token)?.(new Error(`the stream did not answer within ${timeoutMs} ms`));
    }
    return Promise.allSettled(outcomes.map(({ acked }) => acked));
  }

  /** Stops listening; publications still waiting fail at their timeout. */
  close(): void {
    this.subscription?.unsubscribe();
    this.subscription = undefined;
  }

  private subscribe(): void {
    if (this.subscription && !this.subscription.isClosed()) return;
    this.prefix = createInbox();
    this.subscription = this.connection.subscribe(`${this.prefix}.*`, {
      callback: (error, message) => {
        if (error) return;
        const token = message.subject.slice(this.prefix.length + 1);
        this.waiting.get(token)?.(pubAckError(message));
      },
    });
  }

  private publish(publication: StreamPublication): { token: string; acked: Promise<void> } {
    const token = (this.nextToken++).toString(36);
    const acked = new Promise<void>((resolve, reject) => {
      this.waiting.set(token, (error) => {
        this.waiting.delete(token);
        if (error) reject(error);
        else resolve();
      });
    });
    const natsHeaders = headers();
    natsHeaders.set('Nats-Msg-Id', publication.msgId);
    natsHeaders.set('Nats-Expected-Stream', publication.stream);
    for (const [name, value] of Object.entries(publication.headers ?? {})) {
      natsHeaders.set(name, value);
    }
    try {
      this.connection.publish(publication.subject, publication.data, {
        reply: `${this.prefix}.${token}`,
        headers: natsHeaders,
      });
    } catch (error) {
      this.waiting.get(token)?.(error instanceof Error ? error : new Error(String(error)));
    }
    return { token, acked };
  }
}
