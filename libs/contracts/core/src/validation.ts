import { plainToInstance } from 'class-transformer';
import { validateSync, type ValidationError } from 'class-validator';

export type Validated<T> = { ok: true; value: T } | { ok: false; message: string };

/** One readable sentence per failed constraint, with nested paths (`member.email must be …`). */
export function formatValidationErrors(errors: ValidationError[], parentPath = ''): string[] {
  const messages: string[] = [];
  for (const error of errors) {
    const path = parentPath ? `${parentPath}.${error.property}` : error.property;
    for (const text of Object.values(error.constraints ?? {})) {
      messages.push(
        text.startsWith(error.property) ? path + text.slice(error.property.length) : text,
      );
    }
    if (error.children?.length) messages.push(...formatValidationErrors(error.children, path));
  }
  return messages;
}

/**
 * Validates a plain payload against a contract class. Unknown properties are stripped, never
 * stored (no mass assignment).
 */
export function validatePayload<T extends object>(cls: new () => T, plain: unknown): Validated<T> {
  if (typeof plain !== 'object' || plain === null || Array.isArray(plain)) {
    return { ok: false, message: 'request body must be a JSON object' };
  }
  const value = plainToInstance(cls, plain);
  const errors = validateSync(value, { whitelist: true, forbidUnknownValues: true });
  if (errors.length > 0) return { ok: false, message: formatValidationErrors(errors).join('; ') };
  return { ok: true, value };
}
