import { AccountsErrorCode } from '@envoi/contracts-accounts';
import { CommonErrorCode } from '@envoi/contracts-core';

import { statusForCode } from './error-status';

describe('statusForCode', () => {
  const codes: string[] = [...Object.values(CommonErrorCode), ...Object.values(AccountsErrorCode)];

  it.each(codes)('maps %s to an HTTP error status', (code) => {
    const status = statusForCode(code);
    expect(Number.isInteger(status)).toBe(true);
    expect(status).toBeGreaterThanOrEqual(400);
    expect(status).toBeLessThan(600);
  });

  it('maps only the internal and unavailable common codes to 5xx', () => {
    const serverErrors = codes.filter((code) => statusForCode(code) >= 500).sort();
    expect(serverErrors).toEqual([CommonErrorCode.Internal, CommonErrorCode.Unavailable].sort());
  });

  it.each([
    [CommonErrorCode.ValidationFailed, 400],
    [CommonErrorCode.NotFound, 404],
    [CommonErrorCode.Unavailable, 503],
    [CommonErrorCode.Internal, 500],
    [AccountsErrorCode.AccountNotFound, 404],
    [AccountsErrorCode.InvalidApiKey, 401],
    [AccountsErrorCode.MemberAlreadyExists, 409],
    [AccountsErrorCode.InvalidScope, 400],
    [AccountsErrorCode.InvalidIpAllowList, 400],
    [AccountsErrorCode.SelfLockout, 409],
  ])('maps %s to %i', (code, status) => {
    expect(statusForCode(code)).toBe(status);
  });

  it.each(['unknown.code', '', 'toString', '__proto__', 'constructor', 'hasOwnProperty'])(
    'maps the unknown code %j to 500',
    (code) => {
      expect(statusForCode(code)).toBe(500);
    },
  );
});
