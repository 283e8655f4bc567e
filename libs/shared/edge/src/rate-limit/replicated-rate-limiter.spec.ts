import { gcraDecide, type RateLimit } from './gcra';
import { type ReplicaReport, ReplicatedRateLimiter } from './replicated-rate-limiter';

const GENERAL: RateLimit = { perSecond: 100, burst: 200 };
const ACCOUNT = '3f0b7f7e-8a43-4c3e-9d2a-1b2c3d4e5f60';
const OTHER_ACCOUNT = '9a8b7c6d-5e4f-4a3b-8c2d-1e0f9a8b7c6d';
const START = 1_700_000_000_000;
const REPORT_EVERY_MS = 100;
const PEER_EXPIRY_MS = 1_000;
/** The stated tolerance (README): admitted within ±10 % of one exact bucket's count. */
const TOLERANCE = 0.1;

function limiter(replicaId: string, limit: RateLimit = GENERAL) {
  return new ReplicatedRateLimiter({
    replicaId,
    limits: { general: limit },
    reportIntervalMs: REPORT_EVERY_MS,
    peerExpiryMs: PEER_EXPIRY_MS,
  });
}

type Limiter = ReturnType<typeof limiter>;

/** Which replica (index) receives a request at millisecond `t` of the run, if any. */
type Traffic = (t: number) => number[];

/** `perSecond` requests a second, spread over the run's milliseconds, to replicas by `route`. */
function steady(perSecond: number, route: (n: number, t: number) => number): Traffic {
  return (t) => {
    const due = Math.floor(((t + 1) * perSecond) / 1000) - Math.floor((t * perSecond) / 1000);
    return Array.from({ length: due }, (_, i) => route(Math.floor((t * perSecond) / 1000) + i, t));
  };
}

interface Run {
  /** When each let-through request arrived, in ms from the start. */
  admittedAt: number[];
  /** What one exact bucket would have let through of the same requests. */
  exact: number;
}

/**
 * Replicas exchanging reports every REPORT_EVERY_MS (each with its own phase), delivered
 * `latencyMs` later, under `traffic` for `durationMs`.
 */
function simulate(
  replicas: Limiter[],
  traffic: Traffic,
  durationMs: number,
  latencyMs = 5,
  limit: RateLimit = GENERAL,
): Run {
  const inFlight: { at: number; from: number; report: ReplicaReport }[] = [];
  const admittedAt: number[] = [];
  let exactTat: number | undefined;
  let exact = 0;
  for (let t = 0; t < durationMs; t += 1) {
    const now = START + t;
    for (const message of inFlight.filter((m) => m.at === t)) {
      replicas.forEach((replica, index) => {
        if (index !== message.from) replica.receive(message.report, now);
      });
    }
    replicas.forEach((replica, index) => {
      const phase = Math.floor((index * REPORT_EVERY_MS) / replicas.length);
      if (t % REPORT_EVERY_MS === phase) {
        inFlight.push({ at: t + latencyMs, from: index, report: replica.report(now) });
      }
    });
    for (const index of traffic(t)) {
      const replica = replicas[index];
      if (!replica) throw new Error(`no replica ${index}`);
      if (replica.take(ACCOUNT, 'general', now).allowed) admittedAt.push(t);
      const decision = gcraDecide(exactTat, now, limit);
      if (decision.allowed) {
        exact += 1;
        exactTat = decision.tatMs;
      }
    }
  }
  return { admittedAt, exact };
}

/** The most let through in any `windowMs`. */
function busiestWindow(admittedAt: number[], windowMs: number): number {
  let most = 0;
  let first = 0;
  admittedAt.forEach((at, last) => {
    while ((admittedAt[first] ?? at) <= at - windowMs) first += 1;
    most = Math.max(most, last - first + 1);
  });
  return most;
}

/** Replicas that have heard each other's heartbeat (an empty report), as after their start. */
function acquainted(replicas: Limiter[]): Limiter[] {
  const heartbeats = replicas.map((replica) => replica.report(START));
  for (const replica of replicas) heartbeats.forEach((report) => replica.receive(report, START));
  return replicas;
}

const twoReplicas = () => acquainted([limiter('a'), limiter('b')]);

describe('ReplicatedRateLimiter, two replicas reporting every 100 ms', () => {
  // 1 s of any bucket holds at most burst + rate × 1 s.
  const windowCeiling = GENERAL.burst + GENERAL.perSecond;

  it.each<[string, Traffic]>([
    ['all on one replica', steady(400, () => 0)],
    ['spread evenly', steady(400, (n) => n % 2)],
    ['three quarters on one replica', steady(400, (n) => (n % 4 === 0 ? 1 : 0))],
    ['moving from one replica to the other', steady(400, (_n, t) => (t < 2_000 ? 0 : 1))],
    ['just over the limit, spread', steady(120, (n) => n % 2)],
  ])('holds the account limit within the tolerance (%s)', (_name, traffic) => {
    // Reports 40 ms on the way: a loaded bus.
    const run = simulate(twoReplicas(), traffic, 4_000, 40);
    expect(Math.abs(run.admittedAt.length - run.exact)).toBeLessThanOrEqual(TOLERANCE * run.exact);
    expect(busiestWindow(run.admittedAt, 1_000)).toBeLessThanOrEqual(
      windowCeiling * (1 + TOLERANCE),
    );
  });

  it('lets the whole burst through on one replica within two report periods', () => {
    const run = simulate(
      twoReplicas(),
      steady(2_000, () => 0),
      250,
    );
    const inFirstPeriods = run.admittedAt.filter((at) => at < 2 * REPORT_EVERY_MS + 10).length;
    expect(inFirstPeriods).toBeGreaterThanOrEqual(GENERAL.burst);
    expect(run.admittedAt.length).toBeLessThanOrEqual(GENERAL.burst + 25 + 1);
  });

  it('splits the first burst of a spread account, never letting two bursts through', () => {
    const run = simulate(
      twoReplicas(),
      steady(4_000, (n) => n % 2),
      100,
    );
    expect(run.admittedAt.length).toBeGreaterThanOrEqual(GENERAL.burst);
    expect(run.admittedAt.length).toBeLessThanOrEqual(GENERAL.burst + 10 + 1);
  });

  it('lets a request through on an idle replica while another one is busy', () => {
    const [a, b] = twoReplicas() as [Limiter, Limiter];
    for (let i = 0; i < 50; i += 1) a.take(ACCOUNT, 'general', START);
    b.receive(a.report(START), START);
    expect(b.take(ACCOUNT, 'general', START).allowed).toBe(true);
  });

  it('keeps to a limit of one request for the replicas together, within one per replica', () => {
    const limit: RateLimit = { perSecond: 1, burst: 1 };
    const run = simulate(
      acquainted([limiter('a', limit), limiter('b', limit)]),
      steady(50, (n) => n % 2),
      5_000,
      5,
      limit,
    );
    expect(run.admittedAt.length).toBeLessThanOrEqual(run.exact + 2);
    expect(run.admittedAt.length).toBeGreaterThanOrEqual(run.exact - 1);
  });
});

describe('ReplicatedRateLimiter, alone', () => {
  it('enforces the full limits with no peer heard, and says how long to wait', () => {
    const alone = limiter('a');
    const decisions = Array.from({ length: 250 }, () => alone.take(ACCOUNT, 'general', START));
    expect(decisions.filter((decision) => decision.allowed)).toHaveLength(GENERAL.burst);
    expect(decisions[GENERAL.burst]).toMatchObject({ allowed: false, retryAfterMs: 10 });
    expect(alone.take(OTHER_ACCOUNT, 'general', START).allowed).toBe(true);
  });

  it('counts its peers until they fall silent for the expiry', () => {
    const [a, b] = [limiter('a'), limiter('b')];
    expect(a.replicaCount(START)).toBe(1);
    a.receive(b.report(START), START);
    a.receive(a.report(START), START); // its own report, echoed back by NATS
    expect(a.replicaCount(START + PEER_EXPIRY_MS - 1)).toBe(2);
    expect(a.replicaCount(START + PEER_EXPIRY_MS)).toBe(1);
  });

  it('returns to the full limits once its peer falls silent', () => {
    const [a] = twoReplicas() as [Limiter, Limiter];
    const shared = Array.from({ length: 250 }, () => a.take(ACCOUNT, 'general', START));
    expect(shared.filter((decision) => decision.allowed)).toHaveLength(GENERAL.burst / 2);
    const later = START + PEER_EXPIRY_MS + 2_000; // silent peer, and a full bucket again
    const alone = Array.from({ length: 250 }, () => a.take(ACCOUNT, 'general', later));
    expect(alone.filter((decision) => decision.allowed)).toHaveLength(GENERAL.burst);
  });

  it('reports each used bucket once per period, then starts afresh', () => {
    const a = limiter('a');
    for (let i = 0; i < 3; i += 1) a.take(ACCOUNT, 'general', START);
    expect(a.report(START)).toEqual({
      replicaId: 'a',
      buckets: [{ limitClass: 'general', accountId: ACCOUNT, admitted: 3, demanded: 3 }],
    });
    expect(a.report(START + REPORT_EVERY_MS).buckets).toEqual([]);
  });

  it('ignores reports of a class it does not know', () => {
    const a = limiter('a');
    a.receive(
      {
        replicaId: 'b',
        buckets: [{ limitClass: 'x', accountId: ACCOUNT, admitted: 5, demanded: 5 }],
      },
      START,
    );
    expect(a.size).toBe(0);
  });
});
