import type { MessageStatus } from '@envoi/contracts-messages';

import {
  type BatchMessage,
  type BatchMessages,
  byId,
  claimsOf,
  type EventClaim,
  foldBatch,
} from './batch-fold';
import type { DeliveryOutcome } from './delivery-outcome';
import { applyOutcome, type DeliveryState } from './status-machine';

const ACCOUNT = '5f0c6f7e-1d2b-4c3a-9e8f-0a1b2c3d4e5f';
const FIRST = '0190f5c2-6c1e-7a3b-8c4d-00000000000a';
const SECOND = '0190f5c2-6c1e-7a3b-8c4d-00000000000b';
const UNKNOWN = '0190f5c2-6c1e-7a3b-8c4d-00000000000c';

const TYPE_OF: Partial<Record<MessageStatus, DeliveryOutcome['type']>> = {
  Deferred: 'message.transient_error',
  Delivered: 'message.delivered',
  Bounced: 'message.bounced',
  Failed: 'message.failed',
  Expired: 'message.failed',
  Suppressed: 'message.suppressed',
};

const ACCEPTED: DeliveryState = {
  status: 'Received',
  sentAt: null,
  deliveredAt: null,
  bounceClassification: null,
  numAttempts: 0,
  deliveryAttempts: [],
};

function message(id: string, state: DeliveryState = ACCEPTED, retentionDataDays = 3): BatchMessage {
  return { id, accountId: ACCOUNT, retentionDataDays, state };
}

/** An event of the message at minute `minute` (its id names all three). */
function event(
  messageId: string,
  status: MessageStatus,
  minute: number,
  extra: { bounce?: string; accountId?: string; eventId?: string } = {},
): DeliveryOutcome {
  const time = new Date(Date.UTC(2030, 0, 1, 12, minute));
  return {
    eventId: extra.eventId ?? `${messageId.slice(-1)}-${status}-${minute}`,
    type: TYPE_OF[status] ?? 'message.delivered',
    messageId,
    accountId: extra.accountId ?? ACCOUNT,
    reported: {
      status,
      attempt: { time, remoteHost: 'mx.test', reply: `${status} at ${minute}`, status },
      bounceClassification: extra.bounce ?? null,
    },
  };
}

/** What processed_events does with a claim: ON CONFLICT (event_id) DO NOTHING RETURNING. */
function claimIn(processed: Set<string>, claims: readonly EventClaim[]): Set<string> {
  const claimed = new Set<string>();
  for (const { eventId } of claims) {
    if (processed.has(eventId)) continue;
    processed.add(eventId);
    claimed.add(eventId);
  }
  return claimed;
}

/** One batch as the service runs it: claim what is new, then fold; the states it leaves. */
function runBatch(
  messages: BatchMessages,
  processed: Set<string>,
  outcomes: readonly DeliveryOutcome[],
): { results: string[]; messages: BatchMessages } {
  const claimed = claimIn(processed, claimsOf(messages, outcomes));
  const folded = foldBatch(messages, outcomes, claimed);
  const next = new Map(messages);
  for (const [id, { message: before, state }] of folded.changed) next.set(id, { ...before, state });
  return { results: folded.results, messages: next };
}

/** The reference: every event through applyOutcome on its own, in order, each id once. */
function oneByOne(
  states: ReadonlyMap<string, DeliveryState>,
  outcomes: readonly DeliveryOutcome[],
  processed = new Set<string>(),
): Map<string, DeliveryState> {
  const next = new Map(states);
  for (const outcome of outcomes) {
    const state = next.get(outcome.messageId);
    if (!state || processed.has(outcome.eventId)) continue;
    processed.add(outcome.eventId);
    next.set(outcome.messageId, applyOutcome(state, outcome.reported));
  }
  return next;
}

function statesOf(messages: BatchMessages): Map<string, DeliveryState> {
  return new Map([...messages.values()].map((entry) => [entry.id, entry.state]));
}

/** Every order of the items. */
function permutations<T>(items: readonly T[]): T[][] {
  if (items.length <= 1) return [[...items]];
  return items.flatMap((item, index) =>
    permutations([...items.slice(0, index), ...items.slice(index + 1)]).map((rest) => [
      item,
      ...rest,
    ]),
  );
}

describe('foldBatch', () => {
  const messages = byId([message(FIRST), message(SECOND)]);

  it('leaves every message as applying the events one by one in batch order would, in any order', () => {
    const events = [
      event(FIRST, 'Deferred', 0),
      event(FIRST, 'Delivered', 5),
      event(FIRST, 'Bounced', 30, { bounce: 'hard' }),
      event(SECOND, 'Deferred', 1),
      event(SECOND, 'Failed', 9),
    ];
    const orders = permutations(events);
    expect(orders).toHaveLength(120);

    for (const order of orders) {
      const batch = runBatch(messages, new Set(), order);

      expect(batch.results).toEqual(order.map(() => 'applied'));
      expect(statesOf(batch.messages)).toEqual(oneByOne(statesOf(messages), order));
      // The status machine's own guarantee: the same end whatever the order.
      expect([
        batch.messages.get(FIRST)?.state.status,
        batch.messages.get(SECOND)?.state.status,
      ]).toEqual(['Bounced', 'Failed']);
    }
  });

  it('applies a delivery before an earlier deferral without moving back, logging both by time', () => {
    const { messages: after } = runBatch(messages, new Set(), [
      event(FIRST, 'Delivered', 5),
      event(FIRST, 'Deferred', 0),
    ]);

    expect(after.get(FIRST)?.state).toEqual({
      status: 'Delivered',
      sentAt: new Date(Date.UTC(2030, 0, 1, 12, 0)),
      deliveredAt: new Date(Date.UTC(2030, 0, 1, 12, 5)),
      bounceClassification: null,
      numAttempts: 2,
      deliveryAttempts: [
        { time: '2030-01-01T12:00:00.000Z', log: 'mx.test: Deferred at 0', status: 'Deferred' },
        { time: '2030-01-01T12:05:00.000Z', log: 'mx.test: Delivered at 5', status: 'Delivered' },
      ],
    });
  });

  it('starts from the state the message had, and reports only the messages it changed', () => {
    const deferred = applyOutcome(ACCEPTED, event(SECOND, 'Deferred', 0).reported);
    const start = byId([message(FIRST), message(SECOND, deferred)]);

    const folded = foldBatch(start, [event(SECOND, 'Delivered', 3)], new Set(['b-Delivered-3']));

    expect([...folded.changed.keys()]).toEqual([SECOND]);
    expect(folded.changed.get(SECOND)?.state).toEqual(
      applyOutcome(deferred, event(SECOND, 'Delivered', 3).reported),
    );
  });

  it('applies an event that appears twice in a batch once, and claims it once', () => {
    const deferral = event(FIRST, 'Deferred', 0);
    const batch = [deferral, event(FIRST, 'Deferred', 1), deferral];

    expect(claimsOf(messages, batch).map((claim) => claim.eventId)).toEqual([
      'a-Deferred-0',
      'a-Deferred-1',
    ]);
    const { results, messages: after } = runBatch(messages, new Set(), batch);

    expect(results).toEqual(['applied', 'applied', 'duplicate']);
    expect(after.get(FIRST)?.state).toMatchObject({ status: 'Deferred', numAttempts: 2 });
    expect(after.get(FIRST)?.state.deliveryAttempts).toHaveLength(2);
  });

  it('skips events applied by an earlier batch, ending as one by one', () => {
    const processed = new Set<string>();
    const first = [event(FIRST, 'Deferred', 0), event(SECOND, 'Deferred', 0)];
    const second = [
      event(SECOND, 'Deferred', 0),
      event(FIRST, 'Delivered', 4),
      event(FIRST, 'Deferred', 0),
    ];

    const one = runBatch(messages, processed, first);
    const two = runBatch(one.messages, processed, second);

    expect(two.results).toEqual(['duplicate', 'applied', 'duplicate']);
    expect(statesOf(two.messages)).toEqual(oneByOne(statesOf(messages), [...first, ...second]));
    expect(two.messages.get(FIRST)?.state).toMatchObject({ status: 'Delivered', numAttempts: 2 });
    expect(two.messages.get(SECOND)?.state).toMatchObject({ status: 'Deferred', numAttempts: 1 });
  });

  it('drops events of unknown messages and of another account, without claiming them', () => {
    const batch = [
      event(UNKNOWN, 'Delivered', 0),
      event(FIRST, 'Delivered', 0),
      event(SECOND, 'Delivered', 0, { accountId: '00000000-0000-4000-8000-000000000000' }),
    ];

    expect(claimsOf(messages, batch)).toEqual([
      { eventId: 'a-Delivered-0', messageId: FIRST, type: 'message.delivered' },
    ]);
    const { results, messages: after } = runBatch(messages, new Set(), batch);

    expect(results).toEqual(['unknown_message', 'applied', 'unknown_message']);
    expect(after.get(SECOND)?.state).toEqual(ACCEPTED);
  });

  it('matches message and account ids whatever their case, and claims the id as stored', () => {
    const batch = [
      event(FIRST.toUpperCase(), 'Delivered', 0, {
        accountId: ACCOUNT.toUpperCase(),
        eventId: 'e1',
      }),
    ];

    expect(claimsOf(messages, batch)).toEqual([
      { eventId: 'e1', messageId: FIRST, type: 'message.delivered' },
    ]);
    expect(foldBatch(messages, batch, new Set(['e1'])).results).toEqual(['applied']);
  });

  it('keeps the classification of the bounce that made the message Bounced first in the batch', () => {
    const soft = event(FIRST, 'Bounced', 1, { bounce: 'soft' });
    const hard = event(FIRST, 'Bounced', 2, { bounce: 'hard' });

    expect(runBatch(messages, new Set(), [soft, hard]).messages.get(FIRST)?.state).toMatchObject({
      status: 'Bounced',
      bounceClassification: 'soft',
      numAttempts: 2,
    });
    expect(runBatch(messages, new Set(), [hard, soft]).messages.get(FIRST)?.state).toMatchObject({
      bounceClassification: 'hard',
    });
  });
});
