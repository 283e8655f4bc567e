import type { ApiError } from '../errors/api-error';
import { checkUrlText, URL_TEXT_MESSAGES } from './url-text';

function check(url: string, params: Record<string, string> = {}): void {
  checkUrlText({ url, params });
}

function expectRefused(url: string, params: Record<string, string>, message: string): void {
  expect(() => check(url, params)).toThrow(
    expect.objectContaining({ status: 400, message }) as ApiError,
  );
}

describe('checkUrlText', () => {
  it('accepts plain and well-encoded queries and path parameters', () => {
    for (const url of [
      '/v2/accounts/a/suppressions',
      '/v2/accounts/a/suppressions?',
      '/v2/accounts/a/suppressions?email=a%40b.c&limit=10&q=%C3%A9%F0%9F%98%80+x&empty=',
      '/v2/accounts/a/suppressions?a=%25%26%3D',
    ]) {
      expect(() => check(url, { account_id: 'a', domain: 'exämple.com' })).not.toThrow();
    }
  });

  it('refuses a NUL in a query value or name', () => {
    for (const url of ['/x?email=a%00b', '/x?a%00=1', '/x?a=1&b=%00']) {
      expectRefused(url, {}, URL_TEXT_MESSAGES.nulInQuery);
    }
  });

  it('refuses invalid percent-encoding and percent-encoded bytes that are not UTF-8', () => {
    for (const url of [
      '/x?email=%ZZ',
      '/x?email=%',
      '/x?email=a%4',
      '/x?q=%C3',
      '/x?q=%FF',
      '/x?q=%C0%80',
      '/x?q=%ED%A0%80',
      '/x?q=%ED%B0%80',
    ]) {
      expectRefused(url, {}, URL_TEXT_MESSAGES.badQueryEncoding);
    }
  });

  it('refuses a NUL in a decoded path parameter', () => {
    expectRefused(
      '/v2/accounts/a/domains/ex%00ample.com',
      { domain: 'ex\0ample.com' },
      URL_TEXT_MESSAGES.nulInPath,
    );
  });

  it('accepts requests without parameters', () => {
    expect(() => checkUrlText({ url: '/v1/email/send', params: null })).not.toThrow();
  });
});
