import { plainToInstance } from 'class-transformer';
import { ValidateIf, validateSync, type ValidationError } from 'class-validator';

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
 * A hand-written check of one costly property of a contract class (a long array of nested
 * objects): given the property's value as received, the value class-transformer and
 * class-validator would have made of it (whitelisted, its absent-as transforms applied) when it is
 * certainly valid; otherwise undefined, and the whole payload goes through class-transformer and
 * class-validator, so a bad value gets their messages. It may be stricter than the decorators,
 * never looser.
 */
export type FastCheck = (value: unknown) => object | undefined;

interface FastPath {
  property: string;
  check: FastCheck;
}

const fastPaths = new Map<abstract new () => object, FastPath>();

/**
 * Values a fast check found valid: the validators of their property are skipped, in this
 * validation and any later one of the same value (a checked value is never changed afterwards).
 */
const fastChecked = new WeakSet<object>();

/**
 * Makes {@link validatePayload} check `property` of `cls` with `check` first: when it finds the
 * value valid, class-transformer does not copy the value and class-validator does not check it
 * again. The property must carry {@link SkipWhenFastChecked}; it gets no other transform.
 */
export function checkFastFirst<T extends object>(
  cls: new () => T,
  property: keyof T & string,
  check: FastCheck,
): void {
  fastPaths.set(cls, { property, check });
}

/** On a property given a fast check: its validators run only when that check did not pass it. */
export function SkipWhenFastChecked(): PropertyDecorator {
  return ValidateIf(
    (_object, value: unknown) =>
      typeof value !== 'object' || value === null || !fastChecked.has(value),
  );
}

/** The payload as an instance of its class: its fast-checked property set as checked. */
function toInstance<T extends object>(cls: new () => T, plain: object): T {
  const fastPath = fastPaths.get(cls);
  const checked = fastPath?.check(Reflect.get(plain, fastPath.property));
  if (fastPath === undefined || checked === undefined) return plainToInstance(cls, plain);
  fastChecked.add(checked);
  const value = plainToInstance(cls, { ...plain, [fastPath.property]: undefined });
  return Object.assign(value, { [fastPath.property]: checked });
}

/**
 * Validates a plain payload against a contract class. Unknown properties are stripped, never
 * stored (no mass assignment).
 */
export function validatePayload<T extends object>(cls: new () => T, plain: unknown): Validated<T> {
  if (typeof plain !== 'object' || plain === null || Array.isArray(plain)) {
    return { ok: false, message: 'request body must be a JSON object' };
  }
  const value = toInstance(cls, plain);
  const errors = validateSync(value, { whitelist: true, forbidUnknownValues: true });
  if (errors.length > 0) return { ok: false, message: formatValidationErrors(errors).join('; ') };
  return { ok: true, value };
}
