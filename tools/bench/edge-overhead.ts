import 'reflect-metadata';

import { randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';

import {
  countInLog,
  createBenchAccount,
  platformGateway,
  startBareServer,
  startBenchPlatform,
  startGatewayReplica,
} from './bench-platform';
import { runBenchmark } from './bench-run';
import {
  type CaseDefinition,
  type CaseId,
  type Comparison,
  COMPARISONS,
  defineCases,
  type Servers,
} from './edge-cases';
import { type LoadSample, median, preflight, runLoad, summariseLatencies } from './load';

/**
 * `npm run bench:edge`: what the gateway's rate-limit and idempotency layers add per request,
 * next to a bare Fastify HTTPS server measured in the same run (issue 3). Cases are measured in
 * interleaved rounds so that a burst of unrelated load on the machine spreads over all of them.
 */

const SETTINGS = {
  /** Closed-loop connections of the loaded runs. */
  connections: 20,
  warmupSeconds: 1,
  loadedRounds: 3,
  loadedSecondsPerRound: 2,
  /** One connection: the latency a request gains when nothing queues. */
  serialRounds: 2,
  serialSecondsPerRound: 1,
} as const;

/** The shared rate limit's reports failing (its NATS side): the case measured something else. */
const STORE_FALLBACK_MESSAGE = 'rate limit report not sent';

interface Figures {
  connections: number;
  /** Median over the rounds. */
  requestsPerSecond: number;
  requestsPerSecondByRound: number[];
  /** Over every response of every round. */
  latencyMeanMs: number;
  latencyP50Ms: number;
  latencyP99Ms: number;
  responses: number;
  non2xx: number;
  errors: number;
}

interface CaseResult {
  id: CaseId;
  name: string;
  server: string;
  loaded: Figures;
  serial: Figures;
  /** Loaded req/s divided by the bare block's in this run. */
  ratioToBare: number | null;
  /** Times the shared limiter gave up on PostgreSQL (200 ms timeout) during this case's runs. */
  storeFallbacks: number;
  problems: string[];
}

interface ComparisonFigures extends Comparison {
  /** Δ mean latency with one connection: what one request waits longer when nothing queues. */
  deltaMeanMsSerial: number;
  /** Δ mean latency at `connections` (includes queueing behind the other connections). */
  deltaMeanMsLoaded: number;
  /** Δ of 1000 / (req/s) at `connections`: machine time per request at saturation. */
  deltaCapacityMsPerRequest: number;
  /** Subject req/s ÷ baseline req/s at `connections`. */
  throughputRatio: number;
}

function figures(samples: readonly LoadSample[]): Figures {
  const latency = summariseLatencies(samples);
  const sum = (pick: (sample: LoadSample) => number) =>
    samples.reduce((total, sample) => total + pick(sample), 0);
  const perRound = samples.map((sample) => sample.requestsPerSecond);
  return {
    connections: samples[0]?.connections ?? 0,
    requestsPerSecond: median(perRound),
    requestsPerSecondByRound: perRound.map((value) => Math.round(value)),
    latencyMeanMs: latency.meanMs,
    latencyP50Ms: latency.p50Ms,
    latencyP99Ms: latency.p99Ms,
    responses: sum((sample) => sample.responses),
    non2xx: sum((sample) => sample.non2xx),
    errors: sum((sample) => sample.errors),
  };
}

function problemsOf(measured: Figures): string[] {
  const label = `${measured.connections} conn`;
  const problems: string[] = [];
  if (measured.non2xx > 0) problems.push(`${label}: ${measured.non2xx} non-2xx responses`);
  if (measured.errors > 0) problems.push(`${label}: ${measured.errors} connection errors`);
  if (measured.responses === 0) problems.push(`${label}: no responses`);
  return problems;
}

const integer = (value: number) => Math.round(value).toLocaleString('en-US').replace(/,/g, ' ');
const ms = (value: number) => value.toFixed(2);
const signedMs = (value: number) => `${value >= 0 ? '+' : '−'}${Math.abs(value).toFixed(2)} ms`;

const TABLE_HEADER = [
  `${'server'.padEnd(15)} ${'case'.padEnd(44)} ${'req/s'.padStart(7)} ${'×bare'.padStart(6)}`,
  `${'mean'.padStart(7)} ${'p50'.padStart(7)} ${'p99'.padStart(7)} │ 1 conn: ${'mean'.padStart(6)} ${'p99'.padStart(7)}`,
].join(' ');

/** One table row per case: loaded req/s and latency (ms), then latency with one connection. */
function figureLine(result: CaseResult): string {
  const { loaded, serial } = result;
  const ratio = result.ratioToBare === null ? '' : result.ratioToBare.toFixed(3);
  const row = [
    result.server.padEnd(15),
    result.name.padEnd(44),
    integer(loaded.requestsPerSecond).padStart(7),
    ratio.padStart(6),
    ms(loaded.latencyMeanMs).padStart(7),
    ms(loaded.latencyP50Ms).padStart(7),
    ms(loaded.latencyP99Ms).padStart(7),
    '│        ',
    ms(serial.latencyMeanMs).padStart(6),
    ms(serial.latencyP99Ms).padStart(7),
  ].join(' ');
  const notes = [
    ...(result.storeFallbacks > 0
      ? [`WARNING: ${result.storeFallbacks} rate limit report(s) not sent during this case`]
      : []),
    ...result.problems.map((problem) => `INVALID: ${problem}`),
  ];
  return [row, ...notes.map((note) => `${' '.repeat(16)}${note}`)].join('\n');
}

function compare(results: Map<CaseId, CaseResult>, comparison: Comparison): ComparisonFigures {
  const subject = results.get(comparison.subject);
  const baseline = results.get(comparison.baseline);
  if (!subject || !baseline) throw new Error(`missing case for ${comparison.layer}`);
  return {
    ...comparison,
    deltaMeanMsSerial: subject.serial.latencyMeanMs - baseline.serial.latencyMeanMs,
    deltaMeanMsLoaded: subject.loaded.latencyMeanMs - baseline.loaded.latencyMeanMs,
    deltaCapacityMsPerRequest:
      1000 / subject.loaded.requestsPerSecond - 1000 / baseline.loaded.requestsPerSecond,
    throughputRatio: subject.loaded.requestsPerSecond / baseline.loaded.requestsPerSecond,
  };
}

/** Warnings and errors a server logged, by message (pino JSON lines, level ≥ 40). */
function loggedProblems(logFile: string): Record<string, number> {
  const counts: Record<string, number> = {};
  let content = '';
  try {
    content = readFileSync(logFile, 'utf8');
  } catch {
    return counts;
  }
  for (const line of content.split('\n')) {
    if (!line.startsWith('{')) continue;
    try {
      const entry = JSON.parse(line) as { level?: number; msg?: string };
      if ((entry.level ?? 0) < 40) continue;
      const message = entry.msg ?? '(no message)';
      counts[message] = (counts[message] ?? 0) + 1;
    } catch {
      continue;
    }
  }
  return counts;
}

/**
 * Preflight and warm-up of every case, then interleaved rounds: each case's loaded and serial
 * runs alternate with every other case's.
 */
async function measureAll(
  definitions: readonly CaseDefinition[],
  logFileOf: (definition: CaseDefinition) => string,
  signal: AbortSignal,
  log: (line: string) => void,
): Promise<Map<CaseId, CaseResult>> {
  for (const definition of definitions) {
    signal.throwIfAborted();
    await preflight(definition);
    await runLoad(definition, {
      connections: SETTINGS.connections,
      durationSeconds: SETTINGS.warmupSeconds,
      signal,
    });
  }
  const loaded = new Map<CaseId, LoadSample[]>();
  const serial = new Map<CaseId, LoadSample[]>();
  const fallbacks = new Map<CaseId, number>();
  const runRounds = async (
    into: Map<CaseId, LoadSample[]>,
    rounds: number,
    connections: number,
    durationSeconds: number,
  ) => {
    for (let round = 1; round <= rounds; round += 1) {
      log(`round ${round}/${rounds} at ${connections} connection(s)`);
      for (const definition of definitions) {
        const logFile = logFileOf(definition);
        const before = countInLog(logFile, STORE_FALLBACK_MESSAGE);
        const sample = await runLoad(definition, { connections, durationSeconds, signal });
        const added = countInLog(logFile, STORE_FALLBACK_MESSAGE) - before;
        fallbacks.set(definition.id, (fallbacks.get(definition.id) ?? 0) + added);
        into.set(definition.id, [...(into.get(definition.id) ?? []), sample]);
      }
    }
  };
  await runRounds(
    loaded,
    SETTINGS.loadedRounds,
    SETTINGS.connections,
    SETTINGS.loadedSecondsPerRound,
  );
  await runRounds(serial, SETTINGS.serialRounds, 1, SETTINGS.serialSecondsPerRound);

  const results = new Map<CaseId, CaseResult>();
  for (const definition of definitions) {
    const loadedFigures = figures(loaded.get(definition.id) ?? []);
    const serialFigures = figures(serial.get(definition.id) ?? []);
    const bare = definition.bare === null ? undefined : results.get(definition.bare);
    results.set(definition.id, {
      id: definition.id,
      name: definition.name,
      server: definition.target.name,
      loaded: loadedFigures,
      serial: serialFigures,
      ratioToBare: bare ? loadedFigures.requestsPerSecond / bare.loaded.requestsPerSecond : null,
      storeFallbacks: fallbacks.get(definition.id) ?? 0,
      problems: [...problemsOf(loadedFigures), ...problemsOf(serialFigures)],
    });
  }
  return results;
}

function printReport(
  results: Map<CaseId, CaseResult>,
  comparisons: readonly ComparisonFigures[],
  problems: Record<string, Record<string, number>>,
): void {
  console.log(
    `\n${SETTINGS.connections} connections (req/s: median of ${SETTINGS.loadedRounds} rounds), latencies in ms`,
  );
  console.log(TABLE_HEADER);
  for (const result of results.values()) console.log(figureLine(result));
  console.log('\nSummary');
  console.log(
    `  req/s at ${SETTINGS.connections} connections as a ratio of the bare block measured in this run:`,
  );
  for (const result of results.values()) {
    if (result.ratioToBare === null) continue;
    console.log(`    ${result.ratioToBare.toFixed(3)}×  ${result.name} [${result.server}]`);
  }
  console.log(
    '  per-request overhead (Δ = subject − baseline; mean latency at 1 and at 20 connections;',
  );
  console.log('  capacity = Δ of 1000/(req/s), the machine time a request costs at saturation):');
  for (const figures of comparisons) {
    console.log(
      `    ${figures.layer}: ${signedMs(figures.deltaMeanMsSerial)} at 1 conn, ${signedMs(figures.deltaMeanMsLoaded)} at ${SETTINGS.connections} conn, capacity ${signedMs(figures.deltaCapacityMsPerRequest)}, req/s ×${figures.throughputRatio.toFixed(2)}`,
    );
  }
  for (const [server, counts] of Object.entries(problems)) {
    for (const [message, count] of Object.entries(counts)) {
      console.log(`  ${server} logged ${count} × "${message}"`);
    }
  }
}

runBenchmark('edge-overhead', async ({ root, dataDir, stoppers, signal, log }) => {
  log(`starting a throwaway platform in ${dataDir}`);
  const platform = await startBenchPlatform(root, dataDir, log);
  stoppers.add('platform', () => platform.stop());
  signal.throwIfAborted();

  log('starting gateway replicas (rate limit off, local) and the bare Fastify server');
  const [off, local, bare] = await Promise.all([
    startGatewayReplica(
      root,
      platform,
      dataDir,
      'gateway-off',
      { RATE_LIMIT_MODE: 'off' },
      stoppers,
    ),
    startGatewayReplica(
      root,
      platform,
      dataDir,
      'gateway-local',
      { RATE_LIMIT_MODE: 'local' },
      stoppers,
    ),
    startBareServer(root, platform, dataDir, stoppers),
  ]);
  const servers: Servers = { bare, off, local, shared: platformGateway(platform, dataDir) };
  const allServers = [servers.bare, servers.off, servers.local, servers.shared];
  signal.throwIfAborted();

  const account = await createBenchAccount(platform);
  const ca = readFileSync(platform.certificate.certPath, 'utf8');
  const definitions = defineCases(servers, account, ca, randomUUID().slice(0, 8));
  log(
    `${definitions.length} cases: ${SETTINGS.warmupSeconds} s warm-up each, then ${SETTINGS.loadedRounds} interleaved rounds of ${SETTINGS.loadedSecondsPerRound} s at ${SETTINGS.connections} connections and ${SETTINGS.serialRounds} of ${SETTINGS.serialSecondsPerRound} s at 1 connection`,
  );
  const logFileOf = (definition: CaseDefinition) =>
    allServers.find((server) => server.name === definition.target.name)?.logFile ?? '';
  const results = await measureAll(definitions, logFileOf, signal, log);

  const comparisons = COMPARISONS.map((comparison) => compare(results, comparison));
  const problems: Record<string, Record<string, number>> = {};
  for (const server of allServers) problems[server.name] = loggedProblems(server.logFile);
  printReport(results, comparisons, problems);

  // The report's problems are what the servers logged; the run fails on failed responses.
  const invalid = [...results.values()].filter((result) => result.problems.length > 0);
  return {
    report: {
      settings: SETTINGS,
      cases: [...results.values()],
      comparisons,
      loggedProblems: problems,
    },
    problems:
      invalid.length > 0 ? [`${invalid.length} case(s) had failed responses; see the logs`] : [],
  };
});
