import { UnprocessableMessageError } from '@envoi/shared-nats';

import { toComplaintDecision } from './complaint-outcome';

const ACCOUNT = '0190a1b2-3c4d-7e5f-8a9b-0c1d2e3f4a00';
const MESSAGE = '0190a1b2-3c4d-7e5f-8a9b-0c1d2e3f4a5b';

function complaint(data: Record<string, unknown> = {}): unknown {
  return {
    id: 'complaint-1',
    type: 'message.complaint',
    timestamp: '2026-11-03T10:00:00.000Z',
    data: {
      account_id: ACCOUNT,
      id: MESSAGE,
      from: 'orders@Shop.Example',
      recipient: 'Olga@Example.net',
      feedback_type: 'abuse',
      user_agent: 'Yahoo!-Mail-Feedback/2.0',
      ...data,
    },
  };
}

describe('toComplaintDecision', () => {
  it('suppresses the complaining recipient for the sending domain, reason complaint', () => {
    expect(toComplaintDecision(complaint())).toEqual({
      eventId: 'complaint-1',
      suppressions: [
        {
          accountId: ACCOUNT,
          email: 'olga@example.net',
          domain: 'shop.example',
          reason: 'complaint',
        },
      ],
      unusable: [],
    });
  });

  it('names a recipient that is no address instead of suppressing it', () => {
    expect(toComplaintDecision(complaint({ recipient: 'not an address' }))).toMatchObject({
      suppressions: [],
      unusable: ['not an address'],
    });
  });

  it('refuses a malformed event as unprocessable', () => {
    expect(() => toComplaintDecision(complaint({ account_id: 'x' }))).toThrow(
      UnprocessableMessageError,
    );
    expect(() => toComplaintDecision({ id: 'e', type: 'message.bounced', data: {} })).toThrow(
      UnprocessableMessageError,
    );
    expect(() => toComplaintDecision(complaint({ from: 'nobody' }))).toThrow(
      UnprocessableMessageError,
    );
  });
});
