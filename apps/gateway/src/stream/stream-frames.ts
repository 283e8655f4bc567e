import type { ListenerStreamEventRecord } from '@envoi/contracts-core';

import type { StreamKind } from './stream-kinds';

/** What a listener is attached to. */
export interface StreamListener {
  accountId: string;
  kind: StreamKind;
  targetId: string;
  sessionId: string;
}

/** A frame of a webhook or route stream (platform notes 1.12); timestamps are Unix seconds. */
export interface StreamFrame {
  type: 'connected' | 'event' | 'replay';
  event?: {
    type: string;
    stream_id: string;
    account_id: string;
    /** The payload an endpoint receives, parsed. */
    data: unknown;
    metadata: Record<string, string>;
    timestamp: number;
  };
  session_id: string;
  stream: string;
  timestamp: number;
}

const unixSeconds = (date: Date): number => Math.floor(date.getTime() / 1000);

export function connectedFrame(listener: StreamListener, now: Date): StreamFrame {
  return {
    type: 'connected',
    session_id: listener.sessionId,
    stream: listener.kind.name,
    timestamp: unixSeconds(now),
  };
}

/** An event buffered before the listener attached (seq up to `replayUntilSeq`) is a `replay`. */
export function eventFrame(
  listener: StreamListener,
  record: ListenerStreamEventRecord,
  replayUntilSeq: number,
  now: Date,
): StreamFrame {
  return {
    type: record.seq <= replayUntilSeq ? 'replay' : 'event',
    event: {
      type: record.event_type,
      stream_id: listener.targetId,
      account_id: listener.accountId,
      data: JSON.parse(record.body) as unknown,
      metadata: { 'webhook-id': record.event_id, seq: String(record.seq) },
      timestamp: unixSeconds(new Date(record.created_at)),
    },
    session_id: listener.sessionId,
    stream: listener.kind.name,
    timestamp: unixSeconds(now),
  };
}
