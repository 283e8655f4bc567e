import { isHostname } from '@envoi/contracts-core';
import { Type } from 'class-transformer';
import {
  IsInt,
  IsOptional,
  Matches,
  Max,
  Min,
  ValidateBy,
  type ValidationOptions,
} from 'class-validator';

/**
 * `@IsOptional() @Type(() => Number) @IsInt() @Min(min) @Max(max)` as one decorator, for a setting
 * that more than one class declares (same constraints, registered in the same order).
 */
export function IntSetting(min: number, max: number): PropertyDecorator {
  // Stacked decorators apply bottom-up.
  const bottomUp = [Max(max), Min(min), IsInt(), Type(() => Number), IsOptional()];
  return (target, propertyKey) => {
    for (const decorate of bottomUp) decorate(target, propertyKey);
  };
}

/** Lowercases and trims a hostname setting and drops its trailing dot; use with `@Transform`. */
export const normalizeHostname = ({ value }: { value: unknown }): unknown =>
  typeof value === 'string' ? value.trim().toLowerCase().replace(/\.$/, '') : value;

/**
 * A hostname (lowercase, no trailing dot) of two labels or more; `example` shows the operator what
 * is expected in the error message.
 */
export function IsHostnameSetting(example: string, options?: ValidationOptions): PropertyDecorator {
  return ValidateBy(
    {
      name: 'isHostnameSetting',
      validator: {
        validate: (value: unknown) => typeof value === 'string' && isHostname(value),
        defaultMessage: (args) =>
          `${args?.property ?? 'value'} must be a hostname such as ${example}`,
      },
    },
    options,
  );
}

/** `host:port` or `[ipv6]:port`, or a bare address (port 53). */
const DNS_SERVER = String.raw`(\[[0-9a-fA-F:.]+\]|[0-9a-fA-F:.]+|[A-Za-z0-9.-]+)(:[0-9]{1,5})?`;

/** DNS_SERVERS: resolvers as `host:port` entries, comma-separated. */
export function IsDnsServerList(): PropertyDecorator {
  return Matches(new RegExp(`^${DNS_SERVER}(,${DNS_SERVER})*$`), {
    message: 'DNS_SERVERS must be host:port entries separated by commas',
  });
}
