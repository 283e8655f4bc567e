import http from 'node:http';
import type { AddressInfo } from 'node:net';

/** One request an endpoint of the receiver got. */
export interface ReceivedCall {
  endpoint: string;
  method: string;
  headers: Record<string, string>;
  body: string;
  receivedAt: number;
  /** When the call's connection closed: answered, or given up by the caller. */
  closedAt?: number;
}

/** An answer given after a pause. */
export interface DelayedAnswer {
  status: number;
  afterMs: number;
}

/** How an endpoint answers its n-th call (0-based): a status, later, or `hang` (never). */
export type EndpointBehaviour = (call: number) => number | DelayedAnswer | 'hang';

/**
 * A loopback HTTP server standing in for customers' endpoints: `/<endpoint>` answers as its
 * behaviour says (200 when none is set) and every call is recorded.
 */
export class WebhookReceiver {
  readonly calls: ReceivedCall[] = [];
  private readonly behaviours = new Map<string, EndpointBehaviour>();
  private readonly open = new Map<string, number>();
  private readonly peaks = new Map<string, number>();

  private constructor(private readonly server: http.Server) {}

  static async start(): Promise<WebhookReceiver> {
    const server = http.createServer();
    const receiver = new WebhookReceiver(server);
    server.on('request', (request, response) => receiver.handle(request, response));
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    return receiver;
  }

  url(endpoint: string): string {
    const { port } = this.server.address() as AddressInfo;
    return `http://127.0.0.1:${port}/${endpoint}`;
  }

  behave(endpoint: string, behaviour: EndpointBehaviour): void {
    this.behaviours.set(endpoint, behaviour);
  }

  callsTo(endpoint: string): ReceivedCall[] {
    return this.calls.filter((call) => call.endpoint === endpoint);
  }

  /** The most calls the endpoint had open at once. */
  peakOpen(endpoint: string): number {
    return this.peaks.get(endpoint) ?? 0;
  }

  async close(): Promise<void> {
    this.server.closeAllConnections();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }

  private handle(request: http.IncomingMessage, response: http.ServerResponse): void {
    const endpoint = (request.url ?? '/').slice(1);
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      const index = this.callsTo(endpoint).length;
      const call: ReceivedCall = {
        endpoint,
        method: request.method ?? '',
        headers: Object.fromEntries(
          Object.entries(request.headers).map(([name, value]) => [name, String(value)]),
        ),
        body: Buffer.concat(chunks).toString('utf8'),
        receivedAt: Date.now(),
      };
      this.calls.push(call);
      const open = (this.open.get(endpoint) ?? 0) + 1;
      this.open.set(endpoint, open);
      this.peaks.set(endpoint, Math.max(open, this.peakOpen(endpoint)));
      response.on('close', () => {
        call.closedAt = Date.now();
        this.open.set(endpoint, (this.open.get(endpoint) ?? 1) - 1);
      });
      const answer = (this.behaviours.get(endpoint) ?? (() => 200))(index);
      if (answer === 'hang') return;
      const { status, afterMs } =
        typeof answer === 'number' ? { status: answer, afterMs: 0 } : answer;
      const reply = () => {
        response.writeHead(status, { 'content-type': 'text/plain' });
        response.end(`answer ${status} to call ${index}`);
      };
      if (afterMs === 0) reply();
      else setTimeout(reply, afterMs);
    });
  }
}
