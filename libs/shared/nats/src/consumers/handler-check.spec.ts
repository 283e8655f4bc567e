import type { StreamSubject } from '@envoi/contracts-core';

import { streamHandlerProblems } from './handler-check';

const subject = (name: string): StreamSubject<unknown> => ({
  kind: 'stream',
  stream: 'EVENTS',
  name,
});
const bounced = subject('events.message.bounced.v1');
const failed = subject('events.message.failed.v1');

describe('streamHandlerProblems', () => {
  it('is empty when each consumed subject has exactly one handler', () => {
    expect(
      streamHandlerProblems(
        [bounced, failed],
        [
          { durable: 'a-bounced', subject: bounced, handler: 'A.handle' },
          { durable: 'a-failed', subject: failed, handler: 'A.handle' },
        ],
      ),
    ).toEqual([]);
  });

  it('names a consumed subject without a handler', () => {
    expect(
      streamHandlerProblems(
        [bounced, failed],
        [{ durable: 'a-bounced', subject: bounced, handler: 'A.handle' }],
      ),
    ).toEqual(['no handler for events.message.failed.v1']);
  });

  it('names a subject with two handlers, and a durable declared twice', () => {
    expect(
      streamHandlerProblems(
        [bounced],
        [
          { durable: 'a-bounced', subject: bounced, handler: 'A.handle' },
          { durable: 'a-bounced', subject: bounced, handler: 'B.handle' },
        ],
      ),
    ).toEqual([
      'events.message.bounced.v1 has 2 handlers: A.handle, B.handle',
      'durable a-bounced is declared twice',
    ]);
  });

  it('names a handler for a subject the service does not consume', () => {
    expect(
      streamHandlerProblems([], [{ durable: 'a-failed', subject: failed, handler: 'A.handle' }]),
    ).toEqual(['A.handle handles events.message.failed.v1, which this service does not consume']);
  });
});
