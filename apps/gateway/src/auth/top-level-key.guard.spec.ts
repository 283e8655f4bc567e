import type { ExecutionContext } from '@nestjs/common';

import { ApiError } from '../errors/api-error';
import type { Principal } from './principal';
import { SUB_ACCOUNT_KEY_REFUSED, TopLevelKeyGuard } from './top-level-key.guard';

function contextWith(principal: Partial<Principal>): ExecutionContext {
  return {
    switchToHttp: () => ({ getRequest: () => ({ principal }) }),
  } as unknown as ExecutionContext;
}

describe('TopLevelKeyGuard', () => {
  const guard = new TopLevelKeyGuard();

  it("lets a top-level account's key through", () => {
    expect(guard.canActivate(contextWith({ parent_account_id: null }))).toBe(true);
  });

  it("refuses a sub-account's key with 403, whatever its scopes", () => {
    const child = contextWith({ parent_account_id: '6a0b9a38-0000-4000-8000-0000000000aa' });
    let refusal: unknown;
    try {
      guard.canActivate(child);
    } catch (error) {
      refusal = error;
    }
    expect(refusal).toBeInstanceOf(ApiError);
    expect(refusal).toMatchObject({ status: 403, message: SUB_ACCOUNT_KEY_REFUSED });
  });
});
