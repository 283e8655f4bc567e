// The measured cases of `npm run bench:edge` and the layer costs derived from them.
import type { BenchAccount, BenchServer } from './bench-platform';
import type { LoadCase } from './load';

export type CaseId =
  | 'bareGet'
  | 'barePost'
  | 'pingOff'
  | 'pingLocal'
  | 'pingShared'
  | 'membersNoKey'
  | 'membersUniqueKey'
  | 'membersReplay'
  | 'apiKeyReplay'
  | 'membersUniqueKeyShared';

export interface CaseDefinition extends LoadCase {
  id: CaseId;
  /** The bare case this one's req/s is divided by. */
  bare: 'bareGet' | 'barePost' | null;
}

/** One layer's cost: `subject` is `baseline` plus that layer, everything else equal. */
export interface Comparison {
  layer: string;
  subject: CaseId;
  baseline: CaseId;
}

export const COMPARISONS: readonly Comparison[] = [
  { layer: 'rate limit, local (in-process GCRA)', subject: 'pingLocal', baseline: 'pingOff' },
  { layer: 'rate limit, shared (GCRA + NATS)', subject: 'pingShared', baseline: 'pingOff' },
  {
    layer: 'idempotency, fresh key (claim + complete)',
    subject: 'membersUniqueKey',
    baseline: 'membersNoKey',
  },
  {
    layer: 'idempotency, replay (claim + read, no execution)',
    subject: 'membersReplay',
    baseline: 'membersNoKey',
  },
  {
    layer: 'encrypted replay (API key) vs plain replay (member)',
    subject: 'apiKeyReplay',
    baseline: 'membersReplay',
  },
  {
    layer: 'both layers: shared rate limit + fresh key',
    subject: 'membersUniqueKeyShared',
    baseline: 'membersNoKey',
  },
];

export interface Servers {
  bare: BenchServer;
  off: BenchServer;
  local: BenchServer;
  shared: BenchServer;
}

export function defineCases(
  servers: Servers,
  account: BenchAccount,
  ca: string,
  runId: string,
): CaseDefinition[] {
  const target = (server: BenchServer) => ({ name: server.name, baseUrl: server.baseUrl, ca });
  const auth = { authorization: `Bearer ${account.apiKey}` };
  const json = { ...auth, 'content-type': 'application/json' };
  const membersPath = `/v2/accounts/${account.accountId}/members`;
  let sequence = 0;
  const memberBody = () => {
    sequence += 1;
    return JSON.stringify({ email: `bench-${runId}-${sequence}@example.com`, role: 'Developer' });
  };
  const fresh = { status: 201, headers: { 'idempotent-replayed': null } };
  const replayed = { status: 201, headers: { 'idempotent-replayed': 'true' } };
  const ping = { method: 'GET', path: '/v2/ping', headers: auth } as const;
  const freshKeyMember = () => {
    const body = memberBody();
    return {
      method: 'POST' as const,
      path: membersPath,
      headers: { ...json, 'idempotency-key': `bench-${runId}-${sequence}` },
      body,
    };
  };
  return [
    {
      id: 'bareGet',
      name: 'GET tiny JSON',
      target: target(servers.bare),
      request: { method: 'GET', path: '/v2/ping', headers: {} },
      expect: { status: 200 },
      bare: null,
    },
    {
      id: 'barePost',
      name: 'POST JSON echo',
      target: target(servers.bare),
      request: () => ({
        method: 'POST',
        path: '/echo',
        headers: { 'content-type': 'application/json' },
        body: memberBody(),
      }),
      expect: { status: 201 },
      bare: null,
    },
    {
      id: 'pingOff',
      name: 'GET /v2/ping',
      target: target(servers.off),
      request: ping,
      expect: { status: 200 },
      bare: 'bareGet',
    },
    {
      id: 'pingLocal',
      name: 'GET /v2/ping',
      target: target(servers.local),
      request: ping,
      expect: { status: 200 },
      bare: 'bareGet',
    },
    {
      id: 'pingShared',
      name: 'GET /v2/ping',
      target: target(servers.shared),
      request: ping,
      expect: { status: 200 },
      bare: 'bareGet',
    },
    {
      id: 'membersNoKey',
      name: 'POST members, no Idempotency-Key',
      target: target(servers.off),
      request: () => ({ method: 'POST', path: membersPath, headers: json, body: memberBody() }),
      expect: fresh,
      bare: 'barePost',
    },
    {
      id: 'membersUniqueKey',
      name: 'POST members, fresh key per request',
      target: target(servers.off),
      request: freshKeyMember,
      expect: fresh,
      bare: 'barePost',
    },
    // Every request replays the one stored outcome: all connections contend for one record, the
    // worst case of a client retrying a single key (not the typical retry of distinct keys).
    {
      id: 'membersReplay',
      name: 'POST members, one key replayed',
      target: target(servers.off),
      request: {
        method: 'POST',
        path: membersPath,
        headers: { ...json, 'idempotency-key': `bench-${runId}-member-replay` },
        body: JSON.stringify({ email: `bench-${runId}-replay@example.com`, role: 'Developer' }),
      },
      expect: replayed,
      bare: 'barePost',
    },
    {
      id: 'apiKeyReplay',
      name: 'POST api-keys, one key replayed (encrypted)',
      target: target(servers.off),
      request: {
        method: 'POST',
        path: `/v2/accounts/${account.accountId}/api-keys`,
        headers: { ...json, 'idempotency-key': `bench-${runId}-api-key-replay` },
        body: JSON.stringify({ label: `bench-${runId}-replay`, scopes: ['accounts:read'] }),
      },
      expect: replayed,
      bare: 'barePost',
    },
    {
      id: 'membersUniqueKeyShared',
      name: 'POST members, fresh key per request',
      target: target(servers.shared),
      request: freshKeyMember,
      expect: fresh,
      bare: 'barePost',
    },
  ];
}
