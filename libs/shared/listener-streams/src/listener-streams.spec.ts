import { listenerStreamSubjects } from '@envoi/contracts-core';

import type { AttachResult } from './listener-stream-store';
import { type ListenerStreamBuffer, ListenerStreams } from './listener-streams';

class FakeBuffer implements ListenerStreamBuffer {
  attachResult: AttachResult = { attached: true, replayUntilSeq: 7 };
  attachedSession = 'session';
  appendedTargets: string[] = [];
  removedUpTo: number[] = [];

  append = jest.fn(() => Promise.resolve(this.appendedTargets));
  attach = jest.fn(() => Promise.resolve(this.attachResult));
  read = jest.fn(() =>
    Promise.resolve([
      {
        seq: 3,
        targetId: 't',
        eventId: 'e',
        eventType: 'message.routing',
        body: '{}',
        createdAt: new Date('2026-05-01T10:00:00.000Z'),
      },
    ]),
  );
  isAttached = jest.fn((_target: string, session: string) =>
    Promise.resolve(session === this.attachedSession),
  );
  renew = jest.fn((_target: string, session: string) =>
    Promise.resolve(session === this.attachedSession),
  );
  removeUpTo = jest.fn((_target: string, seq: number) => {
    this.removedUpTo.push(seq);
    return Promise.resolve();
  });
  detach = jest.fn((_target: string, session: string) =>
    Promise.resolve(session === this.attachedSession),
  );
}

describe('ListenerStreams', () => {
  const subjects = listenerStreamSubjects('routes');
  const errors = {
    notFound: () => new Error('not found'),
    listenerAttached: () => new Error('busy'),
    notAttached: () => new Error('not attached'),
  };

  function streams() {
    const store = new FakeBuffer();
    const emitted: Array<{ name: string; event: unknown }> = [];
    const requireGranted = jest.fn(() => Promise.resolve());
    const rpc = {
      emit: (subject: { name: string }, event: unknown) => {
        emitted.push({ name: subject.name, event });
      },
    };
    const listenerStreams = new ListenerStreams({
      subjects,
      store,
      rpc,
      bufferMax: 10,
      access: { errors, requireGranted },
    });
    return { listenerStreams, store, emitted, requireGranted };
  }

  it('announces buffered events only for targets that got one', async () => {
    const { listenerStreams, store, emitted } = streams();
    const event = { targetId: 't', eventId: 'e', eventType: 'x', body: '{}' };
    await listenerStreams.append([event]);
    expect(emitted).toEqual([]);
    store.appendedTargets = ['t'];
    await listenerStreams.append([event]);
    expect(store.append).toHaveBeenLastCalledWith([event], 10);
    expect(emitted).toEqual([{ name: 'routes.stream.appended.v1', event: { target_ids: ['t'] } }]);
  });

  it('attaches with the replay bound and announces it; busy and missing targets are refused', async () => {
    const { listenerStreams, store, emitted, requireGranted } = streams();
    await expect(listenerStreams.attach('a', 't', 's', false, 5_000, undefined)).resolves.toEqual({
      replay_until_seq: 7,
    });
    expect(requireGranted).not.toHaveBeenCalled();
    expect(emitted).toEqual([
      { name: 'routes.stream.attached.v1', event: { target_id: 't', session_id: 's' } },
    ]);
    store.attachResult = { attached: false, reason: 'busy' };
    await expect(listenerStreams.attach('a', 't', 's2', false, 5_000, ['d'])).rejects.toThrow(
      'busy',
    );
    expect(requireGranted).toHaveBeenCalledWith('a', 't', ['d']);
    store.attachResult = { attached: false, reason: 'not_found' };
    await expect(listenerStreams.attach('a', 't', 's2', true, 5_000, undefined)).rejects.toThrow(
      'not found',
    );
  });

  it('reads for the attached listener only', async () => {
    const { listenerStreams } = streams();
    await expect(listenerStreams.read('t', 'session', 0, 100)).resolves.toEqual({
      data: [
        {
          seq: 3,
          event_id: 'e',
          event_type: 'message.routing',
          body: '{}',
          created_at: '2026-05-01T10:00:00.000Z',
        },
      ],
    });
    await expect(listenerStreams.read('t', 'other', 0, 100)).rejects.toThrow('not attached');
  });

  it('acknowledges by renewing, then dropping what was written; a replaced listener drops nothing', async () => {
    const { listenerStreams, store } = streams();
    await expect(listenerStreams.ack('t', 'session', 3, 5_000)).resolves.toEqual({
      attached: true,
    });
    await expect(listenerStreams.ack('t', 'session', 0, 5_000)).resolves.toEqual({
      attached: true,
    });
    await expect(listenerStreams.ack('t', 'other', 9, 5_000)).resolves.toEqual({
      attached: false,
    });
    expect(store.removedUpTo).toEqual([3]);
    await expect(listenerStreams.detach('t', 'session')).resolves.toEqual({ attached: false });
    await expect(listenerStreams.detach('t', 'other')).resolves.toEqual({ attached: true });
  });
});
