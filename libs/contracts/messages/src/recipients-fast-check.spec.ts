import { formatValidationErrors, validatePayload } from '@envoi/contracts-core';
import { plainToInstance } from 'class-transformer';
import { validateSync } from 'class-validator';

import { EMAIL_MAX_LENGTH, RECIPIENTS_MAX } from './limits';
import { checkedAddresses, checkedRecipients } from './recipients-fast-check';
import { AddressBody, CreateMessageBody, CreateMessageRequest, RecipientBody } from './requests';
import { V1SendBody } from './v1';

const SEND = { from: { email: 'sender@example.com' }, subject: 'Hi', text_content: 'Hello' };
const ACCOUNT_ID = '3f0b7f7e-8a43-4c3e-9d2a-1b2c3d4e5f60';
const longLocalPart = 'a'.repeat(64);
const longEmail = `${longLocalPart}@${'b'.repeat(60)}.${'c'.repeat(60)}.${'d'.repeat(60)}.com`;

/** What class-transformer and class-validator alone make of a payload (no fast check). */
function decoratorsOnly<T extends object>(cls: new () => T, plain: object): string {
  const value = plainToInstance(cls, plain);
  const errors = validateSync(value, { whitelist: true, forbidUnknownValues: true });
  return errors.length > 0
    ? `invalid: ${formatValidationErrors(errors).join('; ')}`
    : JSON.stringify(value);
}

function validated<T extends object>(cls: new () => T, plain: object): string {
  const result = validatePayload(cls, plain);
  return result.ok ? JSON.stringify(result.value) : `invalid: ${result.message}`;
}

const RECIPIENT_CASES: Record<string, unknown> = {
  'an email': { email: 'a@example.com' },
  'a name': { email: 'a@example.com', name: 'Ann' },
  'an empty name': { email: 'a@example.com', name: '' },
  'a null name': { email: 'a@example.com', name: null },
  'a name of 256 characters': { email: 'a@example.com', name: 'n'.repeat(256) },
  'a name of 255 astral characters': { email: 'a@example.com', name: '😀'.repeat(255) },
  'a number as name': { email: 'a@example.com', name: 7 },
  substitutions: { email: 'a@example.com', substitutions: { first: 'Ann', n: [1, { x: null }] } },
  'null substitutions': { email: 'a@example.com', substitutions: null },
  'substitutions as an array': { email: 'a@example.com', substitutions: ['x'] },
  'substitutions as a string': { email: 'a@example.com', substitutions: 'x' },
  'an unknown key': { email: 'a@example.com', role: 'admin' },
  'no email': { name: 'Ann' },
  'an invalid email': { email: 'not-an-email' },
  'an email with a display name': { email: 'Ann <a@example.com>' },
  'a number as email': { email: 12 },
  'the longest email': { email: longEmail.slice(longEmail.length - EMAIL_MAX_LENGTH) },
  'an email too long': { email: `x${longEmail}` },
  'null as recipient': null,
  'an array as recipient': [{ email: 'a@example.com' }],
  'a string as recipient': 'a@example.com',
};

describe('checkedRecipients', () => {
  it.each(Object.entries(RECIPIENT_CASES))(
    'validates a send to %s as the decorators alone do',
    (_, recipient) => {
      const body = { ...SEND, recipients: [{ email: 'first@example.com' }, recipient] };

      expect(validated(CreateMessageBody, body)).toBe(decoratorsOnly(CreateMessageBody, body));
      const request = { account_id: ACCOUNT_ID, api: 'v2', body };
      expect(validated(CreateMessageRequest, request)).toBe(
        decoratorsOnly(CreateMessageRequest, request),
      );
      const v1 = {
        from: SEND.from,
        recipients: body.recipients,
        content: { subject: 'Hi', text_body: 'Hello' },
      };
      expect(validated(V1SendBody, v1)).toBe(decoratorsOnly(V1SendBody, v1));
    },
  );

  it.each([
    ['no recipients', []],
    [
      'too many recipients',
      Array.from({ length: RECIPIENTS_MAX + 1 }, () => ({ email: 'a@b.co' })),
    ],
    ['recipients as an object', { email: 'a@example.com' }],
    ['null recipients', null],
  ])('validates a send with %s as the decorators alone do', (_, recipients) => {
    const body = { ...SEND, recipients };

    expect(validated(CreateMessageBody, body)).toMatch(/^invalid: /);
    expect(validated(CreateMessageBody, body)).toBe(decoratorsOnly(CreateMessageBody, body));
  });

  it('makes the common shapes by hand, the rest left to the decorators', () => {
    const make = () => new RecipientBody();
    const recipients = checkedRecipients(
      [{ email: 'a@example.com', name: '', substitutions: null }, { email: 'b@example.com' }],
      make,
    );

    expect(recipients).toEqual([{ email: 'a@example.com' }, { email: 'b@example.com' }]);
    expect(recipients?.[0]).toBeInstanceOf(RecipientBody);
    expect(checkedRecipients([{ email: 'a@example.com', role: 'x' }], make)).toBeUndefined();
    const address = { email: 'a@example.com', substitutions: { x: 1 } };
    expect(checkedRecipients([address], make)).toHaveLength(1);
    expect(checkedAddresses([address], () => new AddressBody())).toBeUndefined();
    expect(checkedRecipients([{ email: 'a@example.com', name: '😀' }], make)).toHaveLength(1);
    expect(checkedRecipients([{ email: 'a@example.com', name: 'n'.repeat(256) }], make)).toBe(
      undefined,
    );
  });

  it('checks a full send of 100 recipients by hand', () => {
    const recipients = Array.from({ length: RECIPIENTS_MAX }, (_, index) => ({
      email: `r${index}@example.com`,
      name: `R ${index}`,
      substitutions: { index },
    }));
    const body = { ...SEND, recipients };

    expect(checkedRecipients(recipients, () => new RecipientBody())).toHaveLength(RECIPIENTS_MAX);
    expect(validated(CreateMessageBody, body)).toBe(decoratorsOnly(CreateMessageBody, body));
  });
});
