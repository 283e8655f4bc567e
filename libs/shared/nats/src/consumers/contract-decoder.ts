import { validatePayload } from '@envoi/contracts-core';

import { UnprocessableMessageError } from '../jetstream-consumer';

/**
 * A declaration's decoder for payloads described by a contract class: validates the parsed JSON
 * against it; a payload that does not match is unprocessable (dropped, never retried).
 */
export function contractDecoder<T extends object>(contract: new () => T): (payload: unknown) => T {
  return (payload) => {
    const validated = validatePayload(contract, payload);
    if (!validated.ok) throw new UnprocessableMessageError(validated.message);
    return validated.value;
  };
}
