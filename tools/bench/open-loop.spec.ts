import { mkdtempSync, rmSync } from 'node:fs';
import { createServer, type Server } from 'node:https';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';

import { ensureDevCertificate, readCertificate } from '@envoi/shared-infra';

import { runOpenLoop } from './open-loop';

// Generating the certificate and the TLS handshakes take seconds on a busy machine.
jest.setTimeout(30_000);

describe('runOpenLoop', () => {
  let server: Server;
  let baseUrl: string;
  let ca: string;
  let dir: string;
  /** The server holds each answer this long. */
  let delayMs = 0;
  let served = 0;

  beforeAll(async () => {
    dir = mkdtempSync(path.join(os.tmpdir(), 'open-loop-'));
    const certificate = readCertificate(await ensureDevCertificate(dir));
    ca = certificate.cert;
    server = createServer(certificate, (_request, response) => {
      served++;
      setTimeout(() => response.end(String(served)), delayMs);
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    baseUrl = `https://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });

  afterAll(async () => {
    await new Promise((resolve) => server.close(resolve));
    rmSync(dir, { recursive: true, force: true });
  });

  beforeEach(() => {
    served = 0;
    delayMs = 0;
  });

  const run = (overrides: { ratePerSecond: number; count: number; maxInFlight: number }) =>
    runOpenLoop({
      target: { baseUrl, ca },
      next: () => ({ method: 'GET', path: '/', headers: {} }),
      check: (response) => (response.status === 200 ? null : `status ${response.status}`),
      signal: new AbortController().signal,
      ...overrides,
    });

  it('starts the requests on schedule and times each answer', async () => {
    const sample = await run({ ratePerSecond: 100, count: 20, maxInFlight: 20 });
    expect(sample).toMatchObject({ scheduled: 20, answered: 20, skipped: 0, failed: 0 });
    expect(served).toBe(20);
    // 20 starts 10 ms apart: the last one starts 190 ms after the first.
    expect(sample.durationSeconds).toBeGreaterThanOrEqual(0.19);
    expect(sample.latenciesMs.every((latency) => latency >= 0)).toBe(true);
  });

  it('skips the requests whose turn comes while too many are in flight', async () => {
    // Held far longer than the 90 ms of starts, so that a stalled event loop cannot let one end.
    delayMs = 3_000;
    const sample = await run({ ratePerSecond: 100, count: 10, maxInFlight: 2 });
    expect(sample.answered).toBe(2);
    expect(sample.skipped).toBe(8);
    expect(Math.min(...sample.latenciesMs)).toBeGreaterThanOrEqual(2_990);
  });

  it('counts the answers its check rejects', async () => {
    const sample = await runOpenLoop({
      target: { baseUrl, ca },
      ratePerSecond: 100,
      count: 3,
      maxInFlight: 3,
      next: () => ({ method: 'GET', path: '/', headers: {} }),
      check: () => 'wrong',
      signal: new AbortController().signal,
    });
    expect(sample).toMatchObject({ answered: 0, failed: 3, firstFailure: 'wrong' });
  });
});
