import https from 'node:https';
import type { AddressInfo } from 'node:net';

import { WebhookReceipts } from './webhook-receipts';

/** What a receipt is recorded under: the call's `webhook-id` header unless a body key is given. */
export type ReceiptKeyOf = (body: Buffer) => string | undefined;

/**
 * The benchmark's customer endpoints: an HTTPS server on loopback (the platform's self-signed
 * certificate) that answers every POST to `/<endpoint>` with 200 once its body is read and
 * records its `webhook-id` (or the key `keyOf` reads from its body) per endpoint (de-duplicated).
 */
export class BenchWebhookReceiver {
  readonly receipts = new WebhookReceipts();
  /** Calls without a webhook-id, or not POSTs. */
  unexpected = 0;

  private constructor(private readonly server: https.Server) {}

  static async start(
    tls: { cert: string; key: string },
    keyOf?: ReceiptKeyOf,
  ): Promise<BenchWebhookReceiver> {
    const server = https.createServer({ ...tls, keepAliveTimeout: 30_000 });
    const receiver = new BenchWebhookReceiver(server);
    server.on('request', (request, response) => {
      const chunks: Buffer[] = [];
      if (keyOf) request.on('data', (chunk: Buffer) => chunks.push(chunk));
      else request.resume();
      request.on('end', () => {
        const header = request.headers['webhook-id'];
        const key = keyOf ? keyOf(Buffer.concat(chunks)) : header;
        if (request.method === 'POST' && typeof header === 'string' && typeof key === 'string') {
          receiver.receipts.record((request.url ?? '/').slice(1), key, performance.now());
        } else {
          receiver.unexpected++;
        }
        response.writeHead(200, { 'content-type': 'text/plain' }).end('ok');
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    return receiver;
  }

  url(endpoint: string): string {
    return `https://127.0.0.1:${(this.server.address() as AddressInfo).port}/${endpoint}`;
  }

  async close(): Promise<void> {
    this.server.closeAllConnections();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }
}
