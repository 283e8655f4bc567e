import { randomUUID } from 'node:crypto';
import type { TLSSocket } from 'node:tls';

import type { DomainRecord } from '@envoi/contracts-domains';
import { pollUntil } from '@envoi/shared-testing';

import {
  type AccountSession,
  closeSessions,
  createAccountSession,
} from '../support/account-session';
import { expectError } from '../support/expect-error';
import { type GatewayReplica, startGatewayReplica } from '../support/gateway-replica';
import { parseResponse, rawTcp, rawTls, sendText } from '../support/raw-tls';

/** The gateway's default body limit (BODY_LIMIT_BYTES). */
const BODY_LIMIT_BYTES = 40 * 1024 * 1024;

function httpRequest(lines: string[], body = ''): string {
  return `${lines.join('\r\n')}\r\n\r\n${body}`;
}

/** A reply carries exactly the contract's error key, and never a framework code or the path. */
function expectContractError(
  text: string,
  status: number,
  flavour: 'message' | 'status',
  pathEcho?: string,
): void {
  const response = parseResponse(text);
  expect(response.status).toBe(status);
  expect(response.body).toEqual({ [flavour]: expect.any(String) as unknown });
  expect(text).not.toMatch(/FST_|statusCode|"error"/);
  if (pathEcho) expect(text).not.toContain(pathEcho);
}

describe('transport hardening: framework errors, limits and slow clients (issue 11)', () => {
  let session: AccountSession;

  beforeAll(async () => {
    session = await createAccountSession();
  });

  afterAll(async () => {
    await closeSessions();
  });

  describe("errors raised below the routes use the contract's body", () => {
    const bigHeader = (size: number) => `X-Padding: ${'a'.repeat(size)}`;

    it.each([
      ['v2, headers over the gateway limit', 'GET /v2/ping', bigHeader(20_000), 'message'],
      ['v1, headers over the gateway limit', 'POST /v1/email/send', bigHeader(20_000), 'status'],
      ['v2, headers over the HTTP parser limit', 'GET /v2/ping', bigHeader(70_000), 'message'],
    ] as const)('answers 431 for %s', async (_name, requestLine, header, flavour) => {
      const outcome = await rawTls(
        sendText(
          httpRequest([`${requestLine} HTTP/1.1`, 'Host: localhost', 'Connection: close', header]),
        ),
      );
      expectContractError(outcome.text, 431, flavour);
    });

    it.each([
      [
        'a non-numeric Content-Length',
        ['POST /v2/ping HTTP/1.1', 'Content-Length: abc'],
        'message',
      ],
      ['a CR inside a header value', ['GET /v2/ping HTTP/1.1', 'X-Test: a\rb'], 'message'],
      [
        'Transfer-Encoding together with Content-Length',
        ['POST /v1/email/send HTTP/1.1', 'Content-Length: 5', 'Transfer-Encoding: chunked'],
        'status',
      ],
      ['an invalid request line', ['GET /v2/ping HTTP/9.x'], 'message'],
    ] as const)('answers 400 for %s, closing the connection', async (_name, lines, flavour) => {
      const outcome = await rawTls(
        sendText(httpRequest([...lines, 'Host: localhost'], '0\r\n\r\n')),
      );
      expectContractError(outcome.text, 400, flavour);
      expect(parseResponse(outcome.text).head).toMatch(/\r\nConnection: close/i);
    });

    it('answers 414 for a path segment over the router limit, without echoing it', async () => {
      const segment = `${'x'.repeat(2_000)}.example.test`;
      const outcome = await rawTls(
        sendText(
          httpRequest([
            `GET ${session.path(`/domains/${segment}`)} HTTP/1.1`,
            'Host: localhost',
            'Connection: close',
            `Authorization: Bearer ${session.api.apiKey}`,
          ]),
        ),
      );
      expectContractError(outcome.text, 414, 'message', segment);
    });

    it('answers 400 for a path with broken percent-encoding', async () => {
      const outcome = await rawTls(
        sendText(
          httpRequest(['GET /v2/accounts/%zz HTTP/1.1', 'Host: localhost', 'Connection: close']),
        ),
      );
      expectContractError(outcome.text, 400, 'message', '%zz');
    });

    it.each([
      ['/v2/nope', 'message'],
      ['/v2/accounts/00000000-0000-4000-8000-000000000000/nothing-here', 'message'],
      ['/v1/nope', 'status'],
    ] as const)('answers 404 "not found" for the unknown route %s', async (path, flavour) => {
      const response = await session.api.get(path, { contract: 'skip' });
      expect(response.status).toBe(404);
      expect(response.body).toEqual({ [flavour]: 'not found' });
    });
  });

  describe('credentials given twice', () => {
    it('answers 400 for two Authorization headers instead of using the first', async () => {
      const outcome = await rawTls(
        sendText(
          httpRequest([
            'GET /v2/ping HTTP/1.1',
            'Host: localhost',
            `Authorization: Bearer ${session.api.apiKey}`,
            'Authorization: Bearer envoi-sk-someone-else',
            'Connection: close',
          ]),
        ),
      );
      expectContractError(outcome.text, 400, 'message');
    });

    it('answers 400 with {status} for two X-Api-Key headers on v1', async () => {
      const outcome = await rawTls(
        sendText(
          httpRequest(
            [
              'POST /v1/email/send HTTP/1.1',
              'Host: localhost',
              `X-Api-Key: ${session.api.apiKey}`,
              `X-Api-Key: ${session.api.apiKey}`,
              'Content-Type: application/json',
              'Content-Length: 2',
              'Connection: close',
            ],
            '{}',
          ),
        ),
      );
      expectContractError(outcome.text, 400, 'status');
    });
  });

  describe('every name the API accepts works on every path', () => {
    /** A unique name of exactly `length` characters: labels of at most 63 under example.test. */
    function domainOfLength(length: number): string {
      const suffix = '.example.test';
      const labels: string[] = [];
      let remaining = length - suffix.length;
      while (remaining > 0) {
        let size = Math.min(63, remaining);
        if (remaining - size === 1) size -= 1; // leave room for a dot and a one-letter label
        labels.push(String.fromCharCode(97 + labels.length).repeat(size));
        remaining -= size + 1;
      }
      const unique = randomUUID().replace(/-/g, '').slice(0, 8);
      return `${unique}${labels.join('.').slice(unique.length)}${suffix}`;
    }

    it.each([136, 253])(
      'creates, reads, checks and deletes a %i-character domain',
      async (size) => {
        const name = domainOfLength(size);
        expect(name).toHaveLength(size);
        const created = await session.api.post<DomainRecord>(session.path('/domains'), {
          domain: name,
        });
        expect(created.status).toBe(201);
        const path = session.path(`/domains/${name}`);
        expect((await session.api.get<DomainRecord>(path)).body.domain).toBe(name);
        const checked = await session.api.post<DomainRecord>(`${path}/check-dns`);
        expect(checked.status).toBe(200);
        expect(checked.body.dns_valid).toBe(false);
        expect((await session.api.delete(path)).status).toBe(200);
        expectError(await session.api.get(path), 404);
      },
    );
  });

  describe('a body over the limit', () => {
    const UPLOAD_BYTES = 120 * 1024 * 1024;

    /** Writes the whole upload before reading anything, then half-closes, as a naive client. */
    function upload(chunked: boolean): (socket: TLSSocket) => void {
      return (socket) => {
        const head = [
          `POST ${session.path('/api-keys')} HTTP/1.1`,
          'Host: localhost',
          `Authorization: Bearer ${session.api.apiKey}`,
          'Content-Type: application/json',
          chunked ? 'Transfer-Encoding: chunked' : `Content-Length: ${UPLOAD_BYTES}`,
        ];
        socket.write(httpRequest(head));
        const chunk = Buffer.alloc(256 * 1024, 'a');
        const framed = chunked
          ? Buffer.concat([
              Buffer.from(`${chunk.length.toString(16)}\r\n`),
              chunk,
              Buffer.from('\r\n'),
            ])
          : chunk;
        let sent = 0;
        const pump = () => {
          while (sent < UPLOAD_BYTES) {
            sent += chunk.length;
            if (!socket.write(framed)) {
              socket.once('drain', pump);
              return;
            }
          }
          socket.end(chunked ? '0\r\n\r\n' : '');
        };
        pump();
      };
    }

    it.each([
      ['a declared Content-Length', false],
      ['a chunked upload', true],
    ])(
      'is answered 413 with %s, and the client that keeps uploading reads it',
      async (_n, chunked) => {
        expect(UPLOAD_BYTES).toBeGreaterThan(BODY_LIMIT_BYTES);
        const outcome = await rawTls(upload(chunked), {}, { allowHalfOpen: true });
        expect(outcome.error).toBeUndefined();
        expectContractError(outcome.text, 413, 'message');
      },
    );
  });

  describe('slow and idle clients (a replica with second-long timeouts)', () => {
    let replica: GatewayReplica;
    const PER_IP_LIMIT = 4;
    /** Every timeout below is at most 3 s; anything open after this was held. */
    const CLOSED_WITHIN_MS = 8_000;

    beforeAll(async () => {
      replica = await startGatewayReplica('gateway-timeouts', {
        TLS_HANDSHAKE_TIMEOUT_MS: '1000',
        HTTP_HEADERS_TIMEOUT_MS: '1000',
        HTTP_REQUEST_TIMEOUT_MS: '3000',
        HTTP_IDLE_TIMEOUT_MS: '2000',
        HTTP_MAX_CONNECTIONS_PER_IP: String(PER_IP_LIMIT),
      });
    });

    afterAll(async () => {
      await replica?.stop();
    });

    const on = (localAddress: string) => ({ port: replica.port, localAddress });

    it('closes every kind of stalled connection within seconds', async () => {
      const drip = (socket: TLSSocket) => {
        socket.write('GET /v2/ping HTTP/1.1\r\nHost: localhost\r\n');
        const timer = setInterval(() => socket.write('X-Drip: 1\r\n'), 200);
        socket.once('close', () => clearInterval(timer));
      };
      const bodyDrip = (socket: TLSSocket) => {
        socket.write(
          httpRequest([
            `POST ${session.path('/api-keys')} HTTP/1.1`,
            'Host: localhost',
            `Authorization: Bearer ${session.api.apiKey}`,
            'Content-Type: application/json',
            'Content-Length: 1000',
          ]),
        );
        const timer = setInterval(() => socket.write(' '), 300);
        socket.once('close', () => clearInterval(timer));
      };
      const outcomes = await Promise.all([
        rawTcp(() => undefined, on('127.0.0.21')),
        rawTcp(
          (socket) => socket.write(Buffer.from([0x16, 0x03, 0x01, 0x02, 0x00])),
          on('127.0.0.22'),
        ),
        rawTls(() => undefined, on('127.0.0.23')),
        rawTls(sendText('GET /v2/ping HTTP/1.1\r\nHost: localhost\r\n'), on('127.0.0.24')),
        rawTls(drip, on('127.0.0.25')),
        rawTls(
          sendText(
            httpRequest(
              [
                `POST ${session.path('/api-keys')} HTTP/1.1`,
                'Host: localhost',
                `Authorization: Bearer ${session.api.apiKey}`,
                'Content-Type: application/json',
                'Content-Length: 100',
              ],
              '{"label":',
            ),
          ),
          on('127.0.0.26'),
        ),
        rawTls(bodyDrip, on('127.0.0.27')),
        rawTls(
          sendText(
            httpRequest([
              'GET /v2/ping HTTP/1.1',
              'Host: localhost',
              `Authorization: Bearer ${session.api.apiKey}`,
            ]),
          ),
          on('127.0.0.28'),
        ),
      ]);
      for (const outcome of outcomes) expect(outcome.openMs).toBeLessThan(CLOSED_WITHIN_MS);
      // A client that sent a request line but not its headers in time is told so.
      expectContractError(outcomes[4].text, 408, 'message');
      // The kept-alive connection was served before it idled out.
      expect(parseResponse(outcomes[7].text).status).toBe(200);
    });

    it('caps the connections one address may hold, and frees them when they close', async () => {
      const holders = await Promise.all(
        Array.from({ length: PER_IP_LIMIT }, () => openTls(on('127.0.0.31'))),
      );
      try {
        const refused = await rawTls(() => undefined, on('127.0.0.31'));
        expect(refused.text).toBe('');
        // Closed at once, before any handshake: a connection let in would complete one, then
        // close at the 1 s header timeout.
        expect(refused.tlsEstablished).toBe(false);
        expect(refused.openMs).toBeLessThan(CLOSED_WITHIN_MS);

        const other = await session.api.get('/v2/ping', { ...on('127.0.0.32'), contract: 'skip' });
        expect(other.status).toBe(200);
      } finally {
        for (const socket of holders) socket.destroy();
      }
      await pollUntil(
        () => session.api.get('/v2/ping', { ...on('127.0.0.31'), contract: 'skip' }),
        (response) => response.status === 200,
        { timeoutMs: 5_000, what: 'the address to be served again' },
      );
    });
  });
});

/** A TLS connection that stays open, idle, until the test destroys it. */
async function openTls(target: { port: number; localAddress: string }): Promise<TLSSocket> {
  let opened: TLSSocket | undefined;
  const connected = new Promise<TLSSocket>((resolve, reject) => {
    void rawTls((socket) => {
      opened = socket;
      resolve(socket);
    }, target).then(() => {
      if (!opened) reject(new Error('the connection was closed before the handshake'));
    });
  });
  return connected;
}
