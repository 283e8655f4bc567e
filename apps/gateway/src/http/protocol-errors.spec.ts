import { protocolErrorFor, protocolErrorResponse, requestLinePath } from './protocol-errors';

describe('protocol errors', () => {
  it('reads the path of the request line, and nothing from a chunk without one', () => {
    expect(requestLinePath(Buffer.from('POST /v1/email/send HTTP/1.1\r\nHost: x\r\n'))).toBe(
      '/v1/email/send',
    );
    expect(requestLinePath(Buffer.from('GET /v2/ping HTTP/1.1\r\n'))).toBe('/v2/ping');
    expect(requestLinePath(Buffer.from('X-Padding: aaaa'))).toBe('');
    expect(requestLinePath(undefined)).toBe('');
  });

  it('answers in the body of the path: {status} on v1, {message} elsewhere, and closes', () => {
    const overflow = protocolErrorFor('HPE_HEADER_OVERFLOW');
    const v1 = protocolErrorResponse(overflow, '/v1/email/send');
    expect(v1.startsWith('HTTP/1.1 431 ')).toBe(true);
    expect(v1).toContain('\r\nConnection: close\r\n');
    expect(v1.endsWith('{"status":"request line and headers are too large"}')).toBe(true);
    const other = protocolErrorResponse(protocolErrorFor('HPE_INVALID_METHOD'), '');
    expect(other.startsWith('HTTP/1.1 400 ')).toBe(true);
    expect(other.endsWith('{"message":"malformed HTTP request"}')).toBe(true);
  });
});
