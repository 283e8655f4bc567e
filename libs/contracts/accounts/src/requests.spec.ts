import { validatePayload } from '@envoi/contracts-core';

import { AddMemberRequest, CreateApiKeyBody, UpdateAccountRequest } from './requests';

const ACCOUNT_ID = '3f0b7f7e-8a43-4c3e-9d2a-1b2c3d4e5f60';

/** The message of a failed validation; fails the test when validation succeeds. */
function failure(result: ReturnType<typeof validatePayload>): string {
  if (result.ok) throw new Error('expected validation to fail');
  return result.message;
}

describe('CreateApiKeyBody', () => {
  it('accepts a valid body and strips unknown fields', () => {
    const result = validatePayload(CreateApiKeyBody, {
      label: 'deploy',
      scopes: ['accounts:read'],
      ip_allow_list: ['10.0.0.1'],
      account_id: ACCOUNT_ID,
      is_admin: true,
    });
    expect(result.ok).toBe(true);
    if (!result.ok) return;
    expect(result.value).toBeInstanceOf(CreateApiKeyBody);
    expect({ ...result.value }).toEqual({
      label: 'deploy',
      scopes: ['accounts:read'],
      ip_allow_list: ['10.0.0.1'],
    });
  });

  it('rejects an empty label and empty scopes', () => {
    expect(
      failure(validatePayload(CreateApiKeyBody, { label: '', scopes: [] })).split('; '),
    ).toEqual(
      expect.arrayContaining([
        'label must be longer than or equal to 1 characters',
        'scopes must contain at least 1 elements',
      ]),
    );
  });

  it('reports missing required fields', () => {
    const message = failure(validatePayload(CreateApiKeyBody, {}));
    expect(message).toContain('label must be a string');
    expect(message).toContain('scopes must be an array');
  });

  it('checks each element of the lists', () => {
    const message = failure(
      validatePayload(CreateApiKeyBody, {
        label: 'l',
        scopes: ['accounts:read', 5],
        ip_allow_list: ['x'.repeat(65)],
      }),
    );
    expect(message).toContain('each value in scopes must be a string');
    expect(message).toContain('each value in ip_allow_list must be shorter than or equal to 64');
  });

  it('rejects a body that is not an object', () => {
    expect(validatePayload(CreateApiKeyBody, [])).toEqual({
      ok: false,
      message: 'request body must be a JSON object',
    });
  });
});

describe('UpdateAccountRequest', () => {
  it('keeps only known fields of the nested changes', () => {
    const result = validatePayload(UpdateAccountRequest, {
      account_id: ACCOUNT_ID,
      changes: { name: 'Acme', parent_account_id: ACCOUNT_ID },
      extra: 1,
    });
    expect(result.ok).toBe(true);
    if (!result.ok) return;
    expect(Object.keys(result.value).sort()).toEqual(['account_id', 'changes']);
    expect({ ...result.value.changes }).toEqual({ name: 'Acme' });
  });

  it('reads what a Go client sends for unset fields as absent; an empty about clears it', () => {
    const result = validatePayload(UpdateAccountRequest, {
      account_id: ACCOUNT_ID,
      changes: {
        name: '',
        website: '',
        about: '',
        track_opens: true,
        track_clicks: null,
        message_metadata_retention: null,
      },
    });
    expect(result.ok).toBe(true);
    if (!result.ok) return;
    expect(JSON.parse(JSON.stringify(result.value.changes))).toEqual({
      about: '',
      track_opens: true,
    });
  });

  it('prefixes nested failures with their path', () => {
    const message = failure(
      validatePayload(UpdateAccountRequest, {
        account_id: ACCOUNT_ID,
        changes: { website: 'ftp://example.com', message_data_retention: 31 },
      }),
    );
    expect(message.split('; ')).toEqual([
      'changes.website must be a URL address',
      'changes.message_data_retention must not be greater than 30',
    ]);
  });

  it.each([null, ''])(
    'reads %j as a website left unchanged (Go clients send every field)',
    (website) => {
      const result = validatePayload(UpdateAccountRequest, {
        account_id: ACCOUNT_ID,
        changes: { website },
      });
      expect(result.ok).toBe(true);
      if (!result.ok) return;
      expect(result.value.changes.website).toBeUndefined();
    },
  );

  it.each([' ', 'example.com', 5, false])('rejects the website %j', (website) => {
    expect(
      failure(
        validatePayload(UpdateAccountRequest, { account_id: ACCOUNT_ID, changes: { website } }),
      ),
    ).toContain('changes.website must be a URL address');
  });

  it('rejects changes that are not an object', () => {
    expect(
      failure(validatePayload(UpdateAccountRequest, { account_id: ACCOUNT_ID, changes: 'x' })),
    ).toContain('changes');
  });

  it('rejects a request without changes', () => {
    expect(validatePayload(UpdateAccountRequest, { account_id: ACCOUNT_ID }).ok).toBe(false);
  });
});

describe('AddMemberRequest', () => {
  it('reports failures at both levels together', () => {
    const message = failure(
      validatePayload(AddMemberRequest, {
        account_id: 'nope',
        member: { email: 'not-an-email', role: 'emperor' },
      }),
    );
    expect(message).toContain('account_id must be a UUID');
    expect(message).toContain('member.email must be an email');
    expect(message).toMatch(/member\.role must be one of the following values/);
  });

  it('rejects a request without member', () => {
    expect(validatePayload(AddMemberRequest, { account_id: ACCOUNT_ID }).ok).toBe(false);
  });
});
