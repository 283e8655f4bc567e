import type { ApiResponse } from './api-client';

/** Asserts an error status and a v2 error body of exactly one string `message`. */
export function expectError(response: ApiResponse, status: number, message?: string): void {
  expect({ status: response.status, body: response.body }).toEqual({
    status,
    body: { message: message ?? (expect.any(String) as unknown) },
  });
}
