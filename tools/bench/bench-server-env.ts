import { readFileSync } from 'node:fs';

/** What a bare server process of a benchmark is started with: the platform's TLS files and a port. */
export interface BenchServerEnv {
  key: Buffer;
  cert: Buffer;
  port: number;
}

/** Reads TLS_KEY_FILE, TLS_CERT_FILE and BENCH_PORT, all required. */
export function benchServerEnv(env: NodeJS.ProcessEnv = process.env): BenchServerEnv {
  const keyFile = env['TLS_KEY_FILE'];
  const certFile = env['TLS_CERT_FILE'];
  const port = Number(env['BENCH_PORT']);
  if (!keyFile || !certFile || !Number.isInteger(port)) {
    throw new Error('TLS_KEY_FILE, TLS_CERT_FILE and BENCH_PORT are required');
  }
  return { key: readFileSync(keyFile), cert: readFileSync(certFile), port };
}
