import { spawn } from 'node:child_process';

import { ProcessCpu } from './process-cpu';
import { memoryLines, StackMemory } from './process-memory';

const hasProc = process.platform === 'linux';

(hasProc ? describe : describe.skip)('StackMemory', () => {
  it('sums the resident memory of the processes it does not leave out, by label', async () => {
    const cpu = new ProcessCpu('test runner');
    const child = spawn(process.execPath, ['-e', 'setTimeout(() => {}, 20000)']);
    try {
      await new Promise((resolve) => child.once('spawn', resolve));
      cpu.label(child.pid, 'sleeper');
      const memory = new StackMemory(cpu, new Set(['test runner']));
      const idle = memory.recordIdle();
      expect(idle?.rssMiB['test runner']).toBeUndefined();
      expect(idle?.rssMiB['sleeper']).toBeGreaterThan(1);
      expect(idle?.totalRssMiB).toBe(idle?.rssMiB['sleeper']);
      expect(idle?.processes).toBe(1);
      const report = memory.stop();
      expect(report.samples).toBe(1);
      expect(report.peakRssMiBByLabel?.['sleeper']).toBeGreaterThan(1);
      expect(memoryLines(report).some((line) => line.includes('sleeper'))).toBe(true);
    } finally {
      child.kill();
    }
  });
});
