/** An error the edge itself raises, with its HTTP status and any headers it must carry. */
export class ApiError extends Error {
  constructor(
    readonly status: number,
    message: string,
    readonly headers: Record<string, string> = {},
  ) {
    super(message);
    this.name = 'ApiError';
  }
}

export const AUTH_MESSAGES = {
  missingBearer: 'missing or malformed bearer token',
  invalidKey: 'invalid API key',
  v1InvalidCredentials: 'invalid credentials',
  wrongAccount: 'API key does not belong to this account',
  /** A suspended or deleted account (or a sub-account of a suspended parent). */
  accountSuspended: 'Account is suspended',
  ipNotAllowed: "client IP address is not in this API key's allow list",
  insufficientScope: 'insufficient permissions for the required scope',
} as const;
