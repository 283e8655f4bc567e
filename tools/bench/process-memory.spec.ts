import { spawn } from 'node:child_process';

import { ProcessCpu } from './process-cpu';
import { memoryLines, StackMemory } from './process-memory';

const hasProc = process.platform === 'linux';

/** Runs `body` with a sleeping child process labelled 'sleeper' (the test runner left out). */
async function withSleeper(body: (memory: StackMemory) => Promise<void> | void): Promise<void> {
  const cpu = new ProcessCpu('test runner');
  const child = spawn(process.execPath, ['-e', 'setTimeout(() => {}, 20000)']);
  try {
    await new Promise((resolve) => child.once('spawn', resolve));
    cpu.label(child.pid, 'sleeper');
    await body(new StackMemory(cpu, new Set(['test runner'])));
  } finally {
    child.kill();
  }
}

(hasProc ? describe : describe.skip)('StackMemory', () => {
  it('sums the resident memory of the processes it does not leave out, by label', () =>
    withSleeper((memory) => {
      const idle = memory.recordIdle();
      expect(idle?.rssMiB['test runner']).toBeUndefined();
      expect(idle?.rssMiB['sleeper']).toBeGreaterThan(1);
      expect(idle?.totalRssMiB).toBe(idle?.rssMiB['sleeper']);
      expect(idle?.processes).toBe(1);
      const report = memory.stop();
      expect(report.samples).toBe(1);
      expect(report.peakRssMiBByLabel?.['sleeper']).toBeGreaterThan(1);
      expect(memoryLines(report).some((line) => line.includes('sleeper'))).toBe(true);
    }));

  it('samples every interval in the background until stopped, with PSS at the peak', () =>
    withSleeper(async (memory) => {
      memory.start();
      const deadline = Date.now() + 10_000;
      while (memory.sampleCount < 2 && Date.now() < deadline) {
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
      expect(memory.sampleCount).toBeGreaterThanOrEqual(2);
      const report = memory.stop();
      expect(report.samples).toBe(memory.sampleCount);
      expect(report.peak?.rssMiB['sleeper']).toBeGreaterThan(1);
      expect(report.peak?.pssMiB?.['sleeper']).toBeGreaterThan(0);
      expect(report.peak?.rssMiB['test runner']).toBeUndefined();
    }));
});
