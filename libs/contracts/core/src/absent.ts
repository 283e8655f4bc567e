import { Transform } from 'class-transformer';

/** Reads the values `isUnset` accepts as the field being absent (undefined), when validating. */
function absentWhen(isUnset: (value: unknown) => boolean): PropertyDecorator {
  return Transform(({ value }: { value: unknown }) => (isUnset(value) ? undefined : value), {
    toClassOnly: true,
  });
}

/**
 * An optional field that `""` or `null` leaves unset: Go clients serialise every field, unset
 * strings as `""` and unset pointers as `null`. Only for strings where `""` cannot be a value
 * (an enum, a format, a name that may not be empty); see {@link NullAsAbsent} for the others.
 */
export function EmptyAsAbsent(): PropertyDecorator {
  return absentWhen((value) => value === '' || value === null);
}

/** An optional field that `null` leaves unset (a nullable field, or one a Go client sends null). */
export function NullAsAbsent(): PropertyDecorator {
  return absentWhen((value) => value === null);
}
