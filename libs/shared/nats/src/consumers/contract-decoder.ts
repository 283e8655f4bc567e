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

/**
 * A declaration's decoder for stream events of `type`: their `data`, validated against its
 * contract class; an event of another type or with data that does not match is unprocessable.
 */
export function eventDataDecoder<T extends object>(
  type: string,
  contract: new () => T,
): (event: unknown) => T {
  const decodeData = contractDecoder(contract);
  return (event) => {
    const envelope = (typeof event === 'object' && event !== null ? event : {}) as {
      id?: unknown;
      type?: unknown;
      data?: unknown;
    };
    const what = `event ${String(envelope.id)}`;
    if (envelope.type !== type) {
      throw new UnprocessableMessageError(`${what} is not ${type}: ${String(envelope.type)}`);
    }
    try {
      return decodeData(envelope.data);
    } catch (error) {
      if (error instanceof UnprocessableMessageError) {
        throw new UnprocessableMessageError(`${what}: ${error.message}`);
      }
      throw error;
    }
  };
}
