import { readFileSync } from 'node:fs';
import { join } from 'node:path';

/** The bytes of a sample message of `__fixtures__/mail`. */
export function mailFixture(name: string): Buffer {
  return readFileSync(join(__dirname, 'mail', `${name}.eml`));
}
