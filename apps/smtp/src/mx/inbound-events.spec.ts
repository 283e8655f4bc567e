import { randomUUID } from 'node:crypto';

import { INBOUND_INLINE_MAX_BYTES, type InboundEnvelope } from '@envoi/contracts-routes';

import { type AcceptedRecipient, inboundPublications, inlineBytes } from './inbound-events';

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

  it('carries the bytes of a small routed message in its event, and names the spool of a larger one', () => {
    const recipients: AcceptedRecipient[] = [
      { kind: 'routed', address: 'a@one.test', accountId: randomUUID(), routeIds: [randomUUID()] },
      { kind: 'feedback', address: 'fbl@bounces.test' },
    ];
    const small = Buffer.alloc(INBOUND_INLINE_MAX_BYTES, 'a');
    const inline = inlineBytes(small);
    expect(inline).toBe(small.toString('base64'));
    expect(inlineBytes(Buffer.alloc(INBOUND_INLINE_MAX_BYTES + 1, 'a'))).toBeUndefined();

    const carried = inboundPublications(envelope, recipients, headline, inline);
    expect(carried.map(({ subject, spool }) => [subject, spool])).toEqual([
      ['events.inbound.feedback.v1', 'read_at_once'],
      ['events.inbound.routed.v1', 'none'],
      ['events.inbound.reception.v1', 'none'],
    ]);
    const routed = carried[1].event.data as Record<string, unknown>;
    expect(routed['raw']).toBe(inline);
    expect(routed).not.toHaveProperty('spool');

    const named = inboundPublications(envelope, recipients, headline);
    expect(named[1].spool).toBe('awaited');
    expect(named[1].event.data).toMatchObject({ spool: envelope.spool });
    expect(named[1].event.data).not.toHaveProperty('raw');
  });
});
