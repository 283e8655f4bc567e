import { Controller, type ExecutionContext } from '@nestjs/common';
import { Reflector } from '@nestjs/core';

import { ApiError } from '../errors/api-error';
import type { Principal } from './principal';
import { TopLevelKeyGuard, TopLevelKeyOnly } from './top-level-key.guard';

@Controller()
@TopLevelKeyOnly('parents only')
class MarkedController {
  handle(): string {
    return 'handled';
  }
}

function contextWith(principal: Partial<Principal>): ExecutionContext {
  return {
    switchToHttp: () => ({ getRequest: () => ({ principal }) }),
    getHandler: () => MarkedController.prototype.handle,
    getClass: () => MarkedController,
  } as unknown as ExecutionContext;
}

describe('TopLevelKeyGuard', () => {
  const guard = new TopLevelKeyGuard(new Reflector());

  it("lets a top-level account's key through", () => {
    expect(guard.canActivate(contextWith({ parent_account_id: null }))).toBe(true);
  });

  it("refuses a sub-account's key with 403 and the controller's refusal, whatever its scopes", () => {
    const child = contextWith({ parent_account_id: '6a0b9a38-0000-4000-8000-0000000000aa' });
    let refusal: unknown;
    try {
      guard.canActivate(child);
    } catch (error) {
      refusal = error;
    }
    expect(refusal).toBeInstanceOf(ApiError);
    expect(refusal).toMatchObject({ status: 403, message: 'parents only' });
  });
});
