import { CodedError, CommonErrorCode } from '@envoi/contracts-core';
import { RpcException } from '@nestjs/microservices';

import { rpcErrorBody } from './service-transport';

describe('rpcErrorBody', () => {
  it("answers a coded error's own body", () => {
    expect(rpcErrorBody(new CodedError(CommonErrorCode.NotFound, 'no such message'))).toEqual({
      body: { code: CommonErrorCode.NotFound, message: 'no such message' },
      kind: 'coded',
    });
  });

  it("answers an RpcException's body, without its other fields", () => {
    const exception = new RpcException({ code: 'x.y', message: 'refused', stack: 'inside' });
    expect(rpcErrorBody(exception)).toEqual({
      body: { code: 'x.y', message: 'refused' },
      kind: 'coded',
    });
  });

  it('answers a lost database connection as unavailable', () => {
    const lost = Object.assign(new Error('terminating connection'), { code: '57P01' });
    expect(rpcErrorBody(lost)).toEqual({
      body: { code: CommonErrorCode.Unavailable, message: 'service temporarily unavailable' },
      kind: 'unavailable',
    });
  });

  it('answers anything else as an internal error that says nothing of it', () => {
    for (const bug of [new TypeError('x is undefined'), new RpcException('plain'), 'thrown text']) {
      expect(rpcErrorBody(bug)).toEqual({
        body: { code: CommonErrorCode.Internal, message: 'internal server error' },
        kind: 'internal',
      });
    }
  });
});
