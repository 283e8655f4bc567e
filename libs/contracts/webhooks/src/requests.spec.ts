import { validatePayload } from '@envoi/contracts-core';

import { PING_NAME_MAX, PingRequest } from './requests';

describe('PingRequest', () => {
  it('accepts a name', () => {
    expect(validatePayload(PingRequest, { name: 'tests' })).toMatchObject({ ok: true });
  });

  it.each([{}, { name: '' }, { name: 'x'.repeat(PING_NAME_MAX + 1) }, { name: 7 }])(
    'refuses %j',
    (payload) => {
      expect(validatePayload(PingRequest, payload)).toMatchObject({ ok: false });
    },
  );
});
