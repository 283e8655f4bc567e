import { UnprocessableMessageError } from '@envoi/shared-nats';

import { toRoutedMail } from './routed-mail';

const DATA = {
  inbound_id: '0b9e3c52-8b4f-4d7e-9f50-7d3c1f0f6a11',
  received_at: '2026-01-01T00:00:00.000Z',
  remote_address: '127.0.0.1',
  helo: 'client.example',
  tls: false,
  envelope_from: 'a@example.net',
  size: 10,
  spool: { bucket: 'inbound-spool', name: 'x', size: 10, sha256: 'ab' },
  account_id: '5d7e2a9c-1f3b-4c6d-8e9f-0a1b2c3d4e5f',
  recipients: [
    { address: 'support@example.com', route_ids: ['7c1d2e3f-4a5b-4c6d-9e8f-0a1b2c3d4e5f'] },
  ],
};

describe('toRoutedMail', () => {
  it('reads an inbound.routed event', () => {
    expect(toRoutedMail({ id: 'e1', type: 'inbound.routed', data: DATA })).toEqual(DATA);
  });

  it('reads an inbound.routed event carrying its bytes', () => {
    const inline = { ...DATA, spool: undefined, raw: Buffer.from('0123456789').toString('base64') };
    expect(toRoutedMail({ id: 'e1', type: 'inbound.routed', data: inline })).toEqual(inline);
  });

  const raw = Buffer.from('0123456789').toString('base64');
  it.each([
    [{ id: 'e1', type: 'inbound.bounce', data: DATA }, 'is not inbound.routed'],
    [{ id: 'e1', type: 'inbound.routed' }, 'no data'],
    [{ id: 'e1', type: 'inbound.routed', data: { ...DATA, spool: null } }, 'bad spool or raw'],
    [{ id: 'e1', type: 'inbound.routed', data: { ...DATA, raw } }, 'bad spool or raw'],
    [
      { id: 'e1', type: 'inbound.routed', data: { ...DATA, spool: undefined, raw: 'AAAA' } },
      'bad spool or raw',
    ],
    [
      { id: 'e1', type: 'inbound.routed', data: { ...DATA, recipients: [{ address: 'x' }] } },
      'bad recipients',
    ],
  ])('refuses %j as unprocessable', (event, message) => {
    expect(() => toRoutedMail(event)).toThrow(UnprocessableMessageError);
    expect(() => toRoutedMail(event)).toThrow(message);
  });
});
