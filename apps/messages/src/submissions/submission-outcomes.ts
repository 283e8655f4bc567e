import type { RpcErrorBody } from '@envoi/contracts-core';
import {
  type AcceptSubmissionOutcome,
  AcceptSubmissionRequest,
  type AcceptSubmissionResult,
  AcceptSubmissionsRequest,
  checkedSubmission,
  SUBMISSIONS_PER_BATCH_MAX,
} from '@envoi/contracts-messages';
import { rpcErrorBody } from '@envoi/shared-nats';

import { validRequest } from '../messages/valid-request';

/** The batch's entries, checked by hand first, by the contract's decorators when that fails. */
export function submissionEntries(payload: object): object[] {
  if ('submissions' in payload && isEntryList(payload.submissions)) return payload.submissions;
  return validRequest(AcceptSubmissionsRequest, payload).submissions;
}

function isEntryList(value: unknown): value is object[] {
  return (
    Array.isArray(value) &&
    value.length >= 1 &&
    value.length <= SUBMISSIONS_PER_BATCH_MAX &&
    value.every((entry) => typeof entry === 'object' && entry !== null && !Array.isArray(entry))
  );
}

/** One entry checked as acceptSubmission checks its payload. */
export function submissionRequest(entry: object): AcceptSubmissionRequest {
  return checkedSubmission(entry) ?? validRequest(AcceptSubmissionRequest, entry);
}

/**
 * Each entry accepted on its own, all at once (so that they commit together), answered once every
 * one has ended: its result, or the error body the transport would have answered for it alone.
 */
export async function acceptEach(
  entries: readonly object[],
  accept: (request: AcceptSubmissionRequest) => Promise<AcceptSubmissionResult>,
  onUnexpected: (error: unknown) => void,
): Promise<AcceptSubmissionOutcome[]> {
  return Promise.all(
    entries.map(async (entry): Promise<AcceptSubmissionOutcome> => {
      try {
        return { result: await accept(submissionRequest(entry)) };
      } catch (error) {
        return { error: errorBody(error, onUnexpected) };
      }
    }),
  );
}

/** As the transport's error filter words it (internals never leave); a bug is reported. */
function errorBody(error: unknown, onUnexpected: (error: unknown) => void): RpcErrorBody {
  const { body, kind } = rpcErrorBody(error);
  if (kind === 'internal') onUnexpected(error);
  return body;
}
