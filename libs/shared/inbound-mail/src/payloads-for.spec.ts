import { readFileSync } from 'node:fs';
import { join } from 'node:path';

import type { RouteOptions } from '@envoi/contracts-routes';
import { parse } from 'yaml';

import { mailFixture } from './__fixtures__/read-fixture';
import { parseInboundMessage } from './parse-inbound-message';
import { payloadsFor } from './payloads-for';

const OPTIONS: RouteOptions = {
  attachments: false,
  headers: false,
  group_by_message_id: false,
  strip_replies: false,
};
const TIMESTAMP = '2024-05-06T13:15:46.404433272Z';

describe('payloadsFor', () => {
  async function routed(recipients: string[]) {
    const raw = mailFixture('gmail-reply');
    return { message: await parseInboundMessage(raw), id: 'in-1', size: raw.length, recipients };
  }

  it('makes one payload per matched recipient, each addressed to it', async () => {
    const payloads = payloadsFor(
      await routed(['support@yourdomain.test', 'hidden-bcc@yourdomain.test']),
      {
        routeId: 'route-1',
        options: OPTIONS,
        timestamp: TIMESTAMP,
      },
    );

    expect(
      payloads.map((payload) => [
        payload.type,
        payload.route_id,
        payload.timestamp,
        payload.data.to,
      ]),
    ).toEqual([
      ['message.routing', 'route-1', TIMESTAMP, 'support@yourdomain.test'],
      ['message.routing', 'route-1', TIMESTAMP, 'hidden-bcc@yourdomain.test'],
    ]);
  });

  it('makes one payload for the email when grouped by Message-ID', async () => {
    const payloads = payloadsFor(
      await routed(['support@yourdomain.test', 'ticket-42@yourdomain.test']),
      {
        routeId: 'route-1',
        options: { ...OPTIONS, group_by_message_id: true },
        timestamp: TIMESTAMP,
      },
    );

    // webhooks.yaml: `to` is one address, the first recipient the route matched.
    expect(payloads.map((payload) => payload.data.to)).toEqual(['support@yourdomain.test']);
  });

  it.each([
    ['flags off', OPTIONS],
    [
      'every flag on',
      { attachments: true, headers: true, group_by_message_id: true, strip_replies: true },
    ],
  ])('sends every data field webhooks.yaml requires with %s', async (_name, options) => {
    const [payload] = payloadsFor(await routed(['support@yourdomain.test']), {
      routeId: 'route-1',
      options,
      timestamp: TIMESTAMP,
    });

    expect(Object.keys(payload?.data ?? {})).toEqual(expect.arrayContaining(requiredDataFields()));
  });
});

/** `RouteWebhookData.required` of the reference webhooks.yaml. */
function requiredDataFields(): string[] {
  const file = join(__dirname, '../../../../apps/e2e/contract/reference/webhooks.yaml');
  const document = parse(readFileSync(file, 'utf8')) as {
    components: { schemas: { RouteWebhookData: { required: string[] } } };
  };
  return document.components.schemas.RouteWebhookData.required;
}
