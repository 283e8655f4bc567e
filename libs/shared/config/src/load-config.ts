import { formatValidationErrors } from '@envoi/contracts-core';
import { plainToInstance } from 'class-transformer';
import { validateSync } from 'class-validator';

export class ConfigError extends Error {}

/**
 * Reads and validates configuration from the environment once, at boot. Fails fast with every
 * problem listed, so a misconfigured process never starts half-working.
 */
export function loadConfig<T extends object>(
  schema: new () => T,
  env: NodeJS.ProcessEnv = process.env,
): T {
  const config = plainToInstance(schema, { ...env }, { enableImplicitConversion: true });
  const errors = validateSync(config, { whitelist: true });
  if (errors.length > 0) {
    throw new ConfigError(`invalid configuration: ${formatValidationErrors(errors).join('; ')}`);
  }
  return config;
}
