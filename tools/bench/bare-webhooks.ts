import { createHmac } from 'node:crypto';
import https from 'node:https';

import { type PoolOutcome, runPool, serveBareRuns } from './bare-process-child';
import {
  BARE_WEBHOOKS_RESULT,
  BARE_WEBHOOKS_RUN,
  type BareWebhooksRunRequest,
  type BareWebhooksRunResult,
} from './bare-webhooks.constants';
import { endpointsOf, streamEvent, webhookBodyOf } from './webhook-bench-events';

/**
 * The bare block of the webhooks benchmark: the same deliveries as Envoi's (each event's body for
 * each endpoint it reaches), signed as Standard Webhooks says (HMAC-SHA256 of
 * `{id}.{timestamp}.{body}` keyed by the secret's UTF-8 bytes) and POSTed over HTTPS keep-alive
 * to the same receiver with as many calls in flight as Envoi allows itself (in all and to one
 * endpoint), without a database or a bus. Its own process, runs over IPC (`{type: BARE_WEBHOOKS_RUN, …}` in, `{type:
 * BARE_WEBHOOKS_RESULT, …}` out); each run warms up on the same connections first.
 */

/** A whole run (warm-up included) gives up after this long. */
const RUN_LIMIT_MS = 120_000;

interface Call {
  url: string;
  secret: string;
  eventId: string;
  body: string;
}

function calls(request: BareWebhooksRunRequest, count: number): { ids: string[]; calls: Call[] } {
  const ids: string[] = [];
  const all: Call[] = [];
  for (let index = 0; index < count; index++) {
    const domain = request.domains[index % request.domains.length] ?? '';
    const event = streamEvent(request.accountId, domain, index);
    ids.push(event.id);
    for (const endpoint of endpointsOf(request.endpoints, domain)) {
      all.push({
        url: endpoint.url,
        secret: endpoint.secret,
        eventId: event.id,
        body: webhookBodyOf(event, endpoint.webhookId),
      });
    }
  }
  return { ids, calls: all };
}

function post(call: Call, agent: https.Agent): Promise<void> {
  const timestamp = String(Math.floor(Date.now() / 1000));
  const signature = createHmac('sha256', Buffer.from(call.secret, 'utf8'))
    .update(`${call.eventId}.${timestamp}.${call.body}`, 'utf8')
    .digest('base64');
  const payload = Buffer.from(call.body, 'utf8');
  return new Promise((resolve, reject) => {
    const request = https.request(call.url, {
      method: 'POST',
      agent,
      headers: {
        'content-type': 'application/json',
        'content-length': String(payload.length),
        'webhook-id': call.eventId,
        'webhook-timestamp': timestamp,
        'webhook-signature': `v1,${signature}`,
      },
    });
    request.on('error', reject);
    request.on('response', (response) => {
      response.resume();
      response.on('end', () => {
        const status = response.statusCode ?? 0;
        if (status >= 200 && status < 300) resolve();
        else reject(new Error(`${call.url} answered ${status}`));
      });
      response.on('error', reject);
    });
    request.end(payload);
  });
}

/**
 * Every call, with at most `endpointConcurrency` in flight to one endpoint (as Envoi caps its
 * calls to an endpoint) and `concurrency` in all.
 */
async function postAll(
  all: readonly Call[],
  request: BareWebhooksRunRequest,
  agent: https.Agent,
  deadline: AbortSignal,
): Promise<PoolOutcome> {
  const byEndpoint = new Map<string, Call[]>();
  for (const call of all) {
    const calls = byEndpoint.get(call.url) ?? [];
    calls.push(call);
    byEndpoint.set(call.url, calls);
  }
  const perEndpoint = Math.max(
    1,
    Math.min(request.endpointConcurrency, Math.floor(request.concurrency / byEndpoint.size)),
  );
  const outcomes = await Promise.all(
    [...byEndpoint.values()].map((calls) =>
      runPool(calls.length, perEndpoint, deadline, async (index) => {
        const call = calls[index];
        if (call) await post(call, agent);
      }),
    ),
  );
  return {
    errors: outcomes.reduce((sum, outcome) => sum + outcome.errors, 0),
    firstError: outcomes.find((outcome) => outcome.firstError !== null)?.firstError ?? null,
  };
}

async function run(request: BareWebhooksRunRequest): Promise<BareWebhooksRunResult> {
  const agent = new https.Agent({ keepAlive: true, ca: request.ca });
  const deadline = AbortSignal.timeout(RUN_LIMIT_MS);
  try {
    const warm = await postAll(calls(request, request.warmup).calls, request, agent, deadline);
    const cpuBefore = process.cpuUsage();
    const measured = calls(request, request.count);
    const sent = await postAll(measured.calls, request, agent, deadline);
    const cpu = process.cpuUsage(cpuBefore);
    return {
      type: BARE_WEBHOOKS_RESULT,
      id: request.id,
      measuredEventIds: measured.ids,
      posted: measured.calls.length,
      errors: warm.errors + sent.errors,
      firstError: warm.firstError ?? sent.firstError,
      cpuMs: (cpu.user + cpu.system) / 1000,
    };
  } finally {
    agent.destroy();
  }
}

serveBareRuns<BareWebhooksRunRequest, BareWebhooksRunResult>(
  BARE_WEBHOOKS_RUN,
  run,
  (request, error) => ({
    type: BARE_WEBHOOKS_RESULT,
    id: request.id,
    measuredEventIds: [],
    posted: 0,
    errors: request.count,
    firstError: error,
    cpuMs: NaN,
  }),
);
