import { execFileSync } from 'node:child_process';
import { accessSync, constants, statSync } from 'node:fs';

import { helmBinary } from './helm-binary';

describe('helmBinary', () => {
  it('gives the path of an executable helm v4, extracted once', () => {
    const binary = helmBinary();
    expect(binary).toMatch(/node_modules\/\.cache\/envoi-helm\/[^/]+\/helm$/);
    accessSync(binary, constants.X_OK);
    const version = execFileSync(binary, ['version', '--short'], { encoding: 'utf8' });
    expect(version).toMatch(/^v4\.\d+\.\d+/);
    const { mtimeMs } = statSync(binary);
    expect(helmBinary()).toBe(binary);
    expect(statSync(binary).mtimeMs).toBe(mtimeMs);
  });
});
