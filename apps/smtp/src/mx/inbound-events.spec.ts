import { randomUUID } from 'node:crypto';

import type { InboundEnvelope } from '@envoi/contracts-routes';

import { type AcceptedRecipient, inboundPublications } from './inbound-events';

const envelope: InboundEnvelope = {
  inbound_id: randomUUID(),
  received_at: '2026-11-26T03:00:00.000Z',
  remote_address: '127.0.0.1',
  helo: 'client.example.test',
  tls: false,
  envelope_from: 'sender@example.org',
  size: 100,
  spool: { bucket: 'inbound-spool', name: 'k', size: 100, sha256: 'x' },
};

const headline = { from: 'sender@example.org', subject: 'Hi', messageIdHeader: '<m@example.org>' };

function decoded(recipients: AcceptedRecipient[]) {
  return inboundPublications(envelope, recipients, headline).map((publication) => ({
    subject: publication.subject,
    event: publication.event as {
      id: string;
      data: { inbound_id?: string; account_id: string; id?: string; recipient?: string };
    },
  }));
}

describe('inboundPublications', () => {
  it('keeps the inbound id for the only account whose routes take the message', () => {
    const accountId = randomUUID();
    const events = decoded([
      { kind: 'routed', address: 'a@one.test', accountId, routeIds: [randomUUID()] },
      { kind: 'routed', address: 'b@one.test', accountId, routeIds: [randomUUID()] },
    ]);
    const routed = events.filter(({ event }) => event.data.inbound_id !== undefined);
    expect(routed.map(({ event }) => event.data.inbound_id)).toEqual([envelope.inbound_id]);
    const receptions = events.filter(({ event }) => event.data.recipient !== undefined);
    expect(receptions.map(({ event }) => event.data.id)).toEqual([
      envelope.inbound_id,
      envelope.inbound_id,
    ]);
  });

  it('gives each further account its own stable inbound id, in its routed and reception events', () => {
    const first = randomUUID();
    const second = randomUUID();
    const recipients: AcceptedRecipient[] = [
      { kind: 'routed', address: 'a@one.test', accountId: first, routeIds: [randomUUID()] },
      { kind: 'routed', address: 'b@two.test', accountId: second, routeIds: [randomUUID()] },
    ];
    const events = decoded(recipients);
    const routedIds = new Map(
      events
        .filter(({ event }) => event.data.inbound_id !== undefined)
        .map(({ event }) => [event.data.account_id, event.data.inbound_id]),
    );
    expect(routedIds.get(first)).toBe(envelope.inbound_id);
    const secondId = routedIds.get(second);
    expect(secondId).toMatch(
      /^[0-9a-f]{8}-[0-9a-f]{4}-8[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/,
    );
    expect(secondId).not.toBe(envelope.inbound_id);
    const receptionIds = new Map(
      events
        .filter(({ event }) => event.data.recipient !== undefined)
        .map(({ event }) => [event.data.account_id, event.data.id]),
    );
    expect(receptionIds).toEqual(routedIds);
    expect(decoded(recipients).map(({ event }) => event.id)).toEqual(
      events.map(({ event }) => event.id),
    );
  });
});
