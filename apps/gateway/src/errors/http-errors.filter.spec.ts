import { AccountsErrorCode } from '@envoi/contracts-accounts';
import { CommonErrorCode } from '@envoi/contracts-core';
import { RpcError } from '@envoi/shared-nats';
import { createLogger } from '@envoi/shared-observability';
import type { ArgumentsHost } from '@nestjs/common';
import {
  BadRequestException,
  HttpException,
  InternalServerErrorException,
  NotFoundException,
  PayloadTooLargeException,
} from '@nestjs/common';
import type { FastifyReply, FastifyRequest } from 'fastify';

import { ApiError } from './api-error';
import { errorBody, HttpErrorsFilter, sendError, toErrorResponse } from './http-errors.filter';

const logger = createLogger('test', 'silent');
const respond = (error: unknown) => toErrorResponse(error, logger, 'req-1');

afterEach(() => jest.restoreAllMocks());

describe('toErrorResponse', () => {
  describe('service errors', () => {
    const codes: string[] = [
      ...Object.values(CommonErrorCode),
      ...Object.values(AccountsErrorCode),
    ];

    it.each(codes)('answers %s with a 4xx or 5xx status', (code) => {
      const { status } = respond(new RpcError(code, 'detail'));
      expect(status).toBeGreaterThanOrEqual(400);
      expect(status).toBeLessThan(600);
    });

    it('passes the message of a client error through', () => {
      expect(respond(new RpcError(AccountsErrorCode.AccountNotFound, 'account not found'))).toEqual(
        { status: 404, message: 'account not found', headers: {} },
      );
      expect(respond(new RpcError(CommonErrorCode.ValidationFailed, 'label is bad'))).toEqual({
        status: 400,
        message: 'label is bad',
        headers: {},
      });
    });

    it('hides the internals of an unknown code behind a 500', () => {
      const error = jest.spyOn(logger, 'error');
      const response = respond(new RpcError('billing.exploded', 'SELECT * FROM secrets failed'));
      expect(response).toEqual({ status: 500, message: 'internal server error', headers: {} });
      expect(error).toHaveBeenCalledTimes(1);
    });

    it('hides the internals of common.internal behind a 500', () => {
      expect(respond(new RpcError(CommonErrorCode.Internal, 'stack trace here'))).toEqual({
        status: 500,
        message: 'internal server error',
        headers: {},
      });
    });

    it('answers unavailable with 503 and retry-after', () => {
      const warn = jest.spyOn(logger, 'warn');
      const response = respond(new RpcError(CommonErrorCode.Unavailable, 'nats timeout'));
      expect(response.status).toBe(503);
      expect(response.headers).toEqual({ 'retry-after': '5' });
      expect(response.message).not.toContain('nats');
      expect(response.message).toBe('service temporarily unavailable, retry later');
      expect(warn).toHaveBeenCalledTimes(1);
    });
  });

  describe('edge errors', () => {
    it('passes the status, message and headers of an ApiError', () => {
      const error = new ApiError(401, 'invalid API key', { 'www-authenticate': 'Bearer' });
      expect(respond(error)).toEqual({
        status: 401,
        message: 'invalid API key',
        headers: { 'www-authenticate': 'Bearer' },
      });
    });

    it('gives an ApiError without headers empty headers', () => {
      expect(respond(new ApiError(403, 'forbidden'))).toEqual({
        status: 403,
        message: 'forbidden',
        headers: {},
      });
    });
  });

  describe('Nest HTTP exceptions', () => {
    it('answers a NotFoundException with 404 not found, never echoing the path', () => {
      for (const exception of [
        new NotFoundException(),
        new NotFoundException('Cannot GET /v2/x'),
      ]) {
        expect(respond(exception)).toEqual({ status: 404, message: 'not found', headers: {} });
      }
    });

    it('joins several validation messages', () => {
      expect(respond(new BadRequestException(['a is bad', 'b is bad']))).toEqual({
        status: 400,
        message: 'a is bad; b is bad',
        headers: {},
      });
    });

    it('keeps the status of other client exceptions', () => {
      expect(respond(new PayloadTooLargeException()).status).toBe(413);
      expect(respond(new HttpException('slow down', 429))).toEqual({
        status: 429,
        message: 'slow down',
        headers: {},
      });
    });

    it('hides a 5xx HttpException behind a 500', () => {
      expect(respond(new InternalServerErrorException('db password wrong'))).toEqual({
        status: 500,
        message: 'internal server error',
        headers: {},
      });
    });
  });

  describe('Fastify errors', () => {
    it('keeps the 4xx status and message of a Fastify-style error', () => {
      const error = Object.assign(new Error('Request body is too large'), { statusCode: 413 });
      expect(respond(error)).toEqual({
        status: 413,
        message: 'Request body is too large',
        headers: {},
      });
      expect(respond({ statusCode: 415, message: 'Unsupported Media Type' })).toEqual({
        status: 415,
        message: 'Unsupported Media Type',
        headers: {},
      });
    });

    it.each([
      ['a 5xx status', { statusCode: 503, message: 'upstream secret' }],
      ['a 3xx status', { statusCode: 302, message: 'redirect' }],
      ['a string status', { statusCode: '413', message: 'too large' }],
    ])('answers an error with %s as 500', (_name, error) => {
      expect(respond(error)).toEqual({
        status: 500,
        message: 'internal server error',
        headers: {},
      });
    });
  });

  it.each([
    ['an Error', new Error('TypeError: cannot read x of undefined at /srv/app.js')],
    ['a string', 'boom'],
    ['null', null],
    ['undefined', undefined],
    ['a number', 42],
  ])('answers %s with 500 internal server error and logs it', (_name, thrown) => {
    const error = jest.spyOn(logger, 'error');
    expect(respond(thrown)).toEqual({
      status: 500,
      message: 'internal server error',
      headers: {},
    });
    expect(error).toHaveBeenCalledTimes(1);
  });
});

describe('errorBody', () => {
  it('answers v1 with {status}', () => {
    expect(errorBody('/v1/x', 'bad')).toEqual({ status: 'bad' });
    expect(errorBody('/v1/email/send?x=1', 'bad')).toEqual({ status: 'bad' });
  });

  it('answers v2 and anything else with {message}', () => {
    expect(errorBody('/v2/x', 'bad')).toEqual({ message: 'bad' });
    expect(errorBody('/v1', 'bad')).toEqual({ message: 'bad' });
    expect(errorBody('/health', 'bad')).toEqual({ message: 'bad' });
  });
});

/** A reply recording what the error path sends. */
function fakeReply() {
  const sent: { status?: number; headers?: Record<string, string>; type?: string; body?: unknown } =
    {};
  const reply = {
    status(code: number) {
      sent.status = code;
      return reply;
    },
    headers(values: Record<string, string>) {
      sent.headers = values;
      return reply;
    },
    type(value: string) {
      sent.type = value;
      return reply;
    },
    send(body: unknown) {
      sent.body = body;
      return reply;
    },
  };
  return { reply: reply as unknown as FastifyReply, sent };
}

describe('sendError', () => {
  it('sends the status, headers and a versioned JSON body', () => {
    const { reply, sent } = fakeReply();
    const request = { url: '/v1/email/send' } as FastifyRequest;
    sendError(reply, request, { status: 401, message: 'invalid credentials', headers: {} });
    expect(sent).toEqual({
      status: 401,
      headers: {},
      type: 'application/json; charset=utf-8',
      body: { status: 'invalid credentials' },
    });
  });
});

describe('HttpErrorsFilter', () => {
  it('maps the exception and answers through the reply', () => {
    const { reply, sent } = fakeReply();
    const request = { url: '/v2/accounts', id: 'req-9' } as FastifyRequest;
    const host = {
      switchToHttp: () => ({ getRequest: () => request, getResponse: () => reply }),
    } as unknown as ArgumentsHost;
    new HttpErrorsFilter(logger).catch(
      new ApiError(401, 'invalid API key', { 'www-authenticate': 'Bearer' }),
      host,
    );
    expect(sent.status).toBe(401);
    expect(sent.headers).toEqual({ 'www-authenticate': 'Bearer' });
    expect(sent.body).toEqual({ message: 'invalid API key' });
  });
});
