import { DELIVERY_STREAM, EVENTS_STREAM, type StreamSubject } from '@envoi/contracts-core';
import { newTraceparent, runInTraceContext, traceHeaders } from '@envoi/shared-observability';

import type { OutboxEntry } from './outbox';
import { outboxInsertStatement } from './outbox-insert';

const event: StreamSubject<unknown> = { kind: 'stream', stream: EVENTS_STREAM, name: 'events.a' };
const job: StreamSubject<unknown> = {
  kind: 'stream',
  stream: DELIVERY_STREAM,
  name: 'delivery.jobs',
};

describe('outboxInsertStatement', () => {
  it('sends one array per column, rows in order, whatever their number', () => {
    const due = new Date('2030-01-02T03:04:05.678Z');
    const entries: OutboxEntry[] = [
      { id: 'e1', subject: event, payload: { text: 'a "b" \\ {c}' } },
      { id: 'j1', subject: job, payload: { attempt: 1 }, availableAt: due },
      { id: 'e2', subject: event, payload: [] },
    ];
    const { sql, parameters } = outboxInsertStatement('"s"."outbox"', entries);

    expect(sql).toBe(
      'INSERT INTO "s"."outbox" (id, stream, subject, payload, available_at, trace) ' +
        'SELECT id, stream, subject, payload, coalesce(available_at, now()), trace ' +
        'FROM unnest($1::uuid[], $2::text[], $3::text[], $4::jsonb[], $5::timestamptz[], $6::jsonb[]) ' +
        'WITH ORDINALITY AS r(id, stream, subject, payload, available_at, trace, n) ORDER BY n',
    );
    expect(parameters).toEqual([
      ['e1', 'j1', 'e2'],
      [EVENTS_STREAM, DELIVERY_STREAM, EVENTS_STREAM],
      ['events.a', 'delivery.jobs', 'events.a'],
      ['{"text":"a \\"b\\" \\\\ {c}"}', '{"attempt":1}', '[]'],
      [null, due, null],
      [null, null, null],
    ]);
    expect(outboxInsertStatement('t', [...entries, ...entries]).sql).toBe(
      outboxInsertStatement('t', entries).sql.replace('"s"."outbox"', 't'),
    );
  });

  it('keeps the current trace context on every row', () => {
    const context = { requestId: 'req-1', traceparent: newTraceparent() };
    const { parameters } = runInTraceContext(context, () =>
      outboxInsertStatement('t', [
        { id: 'e1', subject: event, payload: {} },
        { id: 'e2', subject: event, payload: {} },
      ]),
    );
    const trace = JSON.stringify(traceHeaders(context));
    expect(parameters[5]).toEqual([trace, trace]);
  });

  it('leaves a missing payload NULL, as TypeORM did, for the table to refuse', () => {
    const { parameters } = outboxInsertStatement('t', [{ id: 'e', subject: event, payload: null }]);

    expect(parameters[3]).toEqual([null]);
  });
});
