import { ApiError } from '../errors/api-error';
import type { Principal } from './principal';

export const PARENT_KEY_REQUIRED =
  'sub accounts can only be managed with a key of the parent account';

/** Spec 5.6: only a key of a top-level account manages sub-accounts; a child key gets 403. */
export function assertParentAccountKey(principal: Principal): void {
  if (principal.parent_account_id !== null) throw new ApiError(403, PARENT_KEY_REQUIRED);
}
