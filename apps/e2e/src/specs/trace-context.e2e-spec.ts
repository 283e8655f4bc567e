import { randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import path from 'node:path';

import type { CreateMessageResult } from '@envoi/contracts-messages';
import { pollUntil } from '@envoi/shared-testing';

import {
  type AccountSession,
  closeSessions,
  createAccountSession,
} from '../support/account-session';
import { createVerifiedDomain } from '../support/domains';
import { e2eEnvironment } from '../support/environment';

/** The JSON log lines of one of the platform's services (one file per process). */
function logLines(service: string): Array<Record<string, unknown>> {
  const file = path.join(path.dirname(e2eEnvironment().caFile), '..', 'logs', `${service}.log`);
  return readFileSync(file, 'utf8')
    .split('\n')
    .filter((line) => line.startsWith('{'))
    .map((line) => JSON.parse(line) as Record<string, unknown>);
}

/**
 * Issue 12, "context that travels": one send is followed from the edge to the SMTP attempt by
 * its request id — in the gateway's, the messages service's and the delivery service's logs — and
 * the caller's W3C trace continues through every hop (RPC headers, outbox rows, stream messages).
 */
describe('trace context across services (issue 12)', () => {
  let session: AccountSession;

  beforeAll(async () => {
    session = await createAccountSession();
  });

  afterAll(async () => {
    await closeSessions();
  });

  it("finds one send's request id and trace id in the gateway, messages and delivery logs", async () => {
    const domain = await createVerifiedDomain(session);
    const traceId = randomUUID().replace(/-/g, '');
    const response = await session.api.post<CreateMessageResult>(session.path('/messages'), {
      from: { email: `app@${domain.domain}` },
      recipients: [{ email: `traced-${randomUUID().slice(0, 8)}@example.net` }],
      subject: 'Traced',
      text_content: 'Follow me',
    });
    expect(response.status).toBe(202);
    const requestId = String(response.headers['x-request-id']);
    // Sent again with the caller's traceparent: the trace id must reach delivery too.
    const traced = await session.api.send('POST', session.path('/messages'), {
      body: {
        from: { email: `app@${domain.domain}` },
        recipients: [{ email: `traced-${randomUUID().slice(0, 8)}@example.net` }],
        subject: 'Traced',
        text_content: 'Follow me',
      },
      headers: { traceparent: `00-${traceId}-00f067aa0ba902b7-01` },
    });
    expect(traced.status).toBe(202);
    const tracedRequestId = String(traced.headers['x-request-id']);

    const ofRequest = (service: string, id: string) =>
      logLines(service).filter((line) => line['request_id'] === id);
    await pollUntil(
      () => [requestId, tracedRequestId].map((id) => ofRequest('delivery', id).length),
      (counts) => counts.every((count) => count > 0),
      { timeoutMs: 30_000, what: 'the delivery attempts to be logged with their request ids' },
    );
    for (const service of ['gateway', 'messages', 'delivery']) {
      expect({ service, logged: ofRequest(service, requestId).length > 0 }).toEqual({
        service,
        logged: true,
      });
    }
    for (const service of ['messages', 'delivery']) {
      const lines = ofRequest(service, tracedRequestId);
      expect(lines.length).toBeGreaterThan(0);
      for (const line of lines) expect(line['trace_id']).toBe(traceId);
      for (const line of lines) expect(line['account_id']).toBe(session.accountId);
    }
    const delivered = ofRequest('delivery', tracedRequestId).map((line) => String(line['msg']));
    expect(delivered.some((msg) => /Delivered|delivered|250/.test(msg))).toBe(true);
  });
});
