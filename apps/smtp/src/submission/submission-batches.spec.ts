import { CommonErrorCode } from '@envoi/contracts-core';
import {
  type AcceptSubmissionRequest,
  type AcceptSubmissionResult,
  type AcceptSubmissionsRequest,
  type AcceptSubmissionsResult,
  MessagesErrorCode,
} from '@envoi/contracts-messages';
import { RpcError } from '@envoi/shared-nats';

import type { BusRequester } from './bus-requester';
import { SubmissionBatches, type SubmissionBatchLimits } from './submission-batches';

const SINGLE = 'messages.submission.accept.v1';
const BATCH = 'messages.submission.accept-batch.v1';

/** A bus whose requests stay in flight until the test answers them. */
class HeldBus implements BusRequester {
  readonly sent: Array<{
    subject: string;
    payload: unknown;
    answer: (reply: unknown) => void;
    fail: (error: unknown) => void;
  }> = [];

  request: BusRequester['request'] = (subject, payload) =>
    new Promise((resolve, reject) => {
      this.sent.push({
        subject: subject.name,
        payload,
        answer: (reply) => resolve(reply as never),
        fail: reject,
      });
    });

  /** The submission ids each request carried, in order. */
  carried(): string[][] {
    return this.sent.map(({ subject, payload }) =>
      subject === BATCH
        ? (payload as AcceptSubmissionsRequest).submissions.map(
            (entry) => (entry as AcceptSubmissionRequest).submission_id,
          )
        : [(payload as AcceptSubmissionRequest).submission_id],
    );
  }
}

function submission(id: string, rawChars = 8): AcceptSubmissionRequest {
  return {
    account_id: '00000000-0000-4000-8000-000000000001',
    credential_id: '00000000-0000-4000-8000-000000000002',
    credential_sandbox: false,
    envelope_from: 'app@acme.example',
    recipients: ['to@example.com'],
    raw_base64: 'A'.repeat(rawChars),
    submission_id: id,
  };
}

function resultOf(id: string): AcceptSubmissionResult {
  return {
    message_id_header: `<${id}@acme.example>`,
    messages: [
      { recipient: 'to@example.com', id: `<${id}@acme.example>`, status: 'queued', error: null },
    ],
  };
}

/** Lets every settled promise's callbacks run. */
const settled = () => new Promise<void>((resolve) => setImmediate(resolve));

const LIMITS: SubmissionBatchLimits = { lanes: 2, maxSubmissions: 3, maxInlineChars: 100 };

describe('SubmissionBatches', () => {
  it('sends a submission at once, alone, while a lane is idle', async () => {
    const bus = new HeldBus();
    const batches = new SubmissionBatches(bus, LIMITS);
    const first = batches.submit(submission('a'));
    const second = batches.submit(submission('b'));
    expect(bus.sent.map(({ subject }) => subject)).toEqual([SINGLE, SINGLE]);
    bus.sent[0]?.answer(resultOf('a'));
    bus.sent[1]?.answer(resultOf('b'));
    await expect(first).resolves.toEqual(resultOf('a'));
    await expect(second).resolves.toEqual(resultOf('b'));
  });

  it('sends those that waited for a busy lane together, each answered its own outcome', async () => {
    const bus = new HeldBus();
    const batches = new SubmissionBatches(bus, LIMITS);
    const busy = [batches.submit(submission('a')), batches.submit(submission('b'))];
    const waited = ['c', 'd', 'e'].map((id) => batches.submit(submission(id)));
    expect(bus.sent).toHaveLength(2);

    bus.sent[0]?.answer(resultOf('a'));
    await settled();
    expect(bus.carried()).toEqual([['a'], ['b'], ['c', 'd', 'e']]);
    const refusal = { code: MessagesErrorCode.SubmissionMalformed, message: 'no From header' };
    const reply: AcceptSubmissionsResult = {
      outcomes: [{ result: resultOf('c') }, { error: refusal }, { result: resultOf('e') }],
    };
    bus.sent[2]?.answer(reply);
    bus.sent[1]?.answer(resultOf('b'));

    await expect(Promise.all(busy)).resolves.toEqual([resultOf('a'), resultOf('b')]);
    await expect(waited[0]).resolves.toEqual(resultOf('c'));
    await expect(waited[1]).rejects.toEqual(new RpcError(refusal.code, refusal.message));
    await expect(waited[2]).resolves.toEqual(resultOf('e'));
  });

  it('carries at most maxSubmissions and maxInlineChars per request, a larger one alone', async () => {
    const bus = new HeldBus();
    const batches = new SubmissionBatches(bus, { ...LIMITS, lanes: 1 });
    const all = [
      batches.submit(submission('a')),
      ...['b', 'c', 'd', 'e'].map((id) => batches.submit(submission(id, 10))),
      batches.submit(submission('big', 500)),
      batches.submit(submission('f', 60)),
      batches.submit(submission('g', 60)),
    ];
    for (let request = 0; request < 6; request += 1) {
      const sent = bus.sent[request];
      if (!sent) throw new Error(`request ${request} was not sent`);
      const ids = bus.carried()[request] ?? [];
      sent.answer(
        sent.subject === BATCH
          ? { outcomes: ids.map((id) => ({ result: resultOf(id) })) }
          : resultOf(ids[0] ?? ''),
      );
      await settled();
    }
    await Promise.all(all);
    expect(bus.carried()).toEqual([['a'], ['b', 'c', 'd'], ['e'], ['big'], ['f'], ['g']]);
  });

  it('sends a submission whose message is in the upload bucket alone', async () => {
    const bus = new HeldBus();
    const batches = new SubmissionBatches(bus, { ...LIMITS, lanes: 1 });
    const uploaded = (id: string): AcceptSubmissionRequest => {
      const request: AcceptSubmissionRequest = {
        ...submission(id),
        upload: {
          bucket: 'message-uploads',
          name: `smtp-${id}`,
          size: 300_000,
          sha256: 'ab'.repeat(32),
        },
      };
      delete request.raw_base64;
      return request;
    };
    const all = [
      batches.submit(submission('a')),
      batches.submit(submission('b')),
      batches.submit(uploaded('big')),
      batches.submit(submission('c')),
    ];
    for (let request = 0; request < 4; request += 1) {
      const sent = bus.sent[request];
      if (!sent) break;
      sent.answer(resultOf(bus.carried()[request]?.[0] ?? ''));
      await settled();
    }
    await Promise.all(all);
    expect(bus.carried()).toEqual([['a'], ['b'], ['big'], ['c']]);
  });

  it('fails each submission of a request that failed with its error, and goes on', async () => {
    const bus = new HeldBus();
    const batches = new SubmissionBatches(bus, { ...LIMITS, lanes: 1 });
    const first = batches.submit(submission('a'));
    const waited = [batches.submit(submission('b')), batches.submit(submission('c'))];
    bus.sent[0]?.answer(resultOf('a'));
    await settled();
    const timeout = new RpcError(CommonErrorCode.Unavailable, `${BATCH}: timed out`);
    bus.sent[1]?.fail(timeout);
    await expect(first).resolves.toEqual(resultOf('a'));
    await expect(waited[0]).rejects.toBe(timeout);
    await expect(waited[1]).rejects.toBe(timeout);

    const later = batches.submit(submission('d'));
    bus.sent[2]?.answer(resultOf('d'));
    await expect(later).resolves.toEqual(resultOf('d'));
  });
});
