import { CodedError, CommonErrorCode, validatePayload } from '@envoi/contracts-core';

/** The payload validated as the transport's pipe would, failing with its `validation_failed`. */
export function validRequest<T extends object>(cls: new () => T, payload: unknown): T {
  const validated = validatePayload(cls, payload);
  if (!validated.ok) throw new CodedError(CommonErrorCode.ValidationFailed, validated.message);
  return validated.value;
}
