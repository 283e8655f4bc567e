import { mailFixture } from './__fixtures__/read-fixture';
import { DEFAULT_INBOUND_LIMITS } from './inbound-limits';
import { scanMimeStructure } from './mime-structure';

function scan(lines: string[]) {
  return scanMimeStructure(Buffer.from(lines.join('\r\n')), DEFAULT_INBOUND_LIMITS);
}

describe('scanMimeStructure', () => {
  it('counts the entities and the depth of nested multiparts', () => {
    expect(scanMimeStructure(mailFixture('gmail-reply'), DEFAULT_INBOUND_LIMITS)).toEqual({
      parts: 7,
      depth: 3,
      leafContentTypes: ['text/plain', 'text/html', 'image/png', 'application/pdf'],
    });
  });

  it('descends into an attached message and its folded, unquoted boundary', () => {
    const structure = scan([
      'Content-Type: multipart/mixed;',
      '\tboundary=outer',
      '',
      '--outer',
      'Content-Type: message/rfc822',
      '',
      'Subject: forwarded',
      'Content-Type: multipart/alternative; boundary="inner"',
      '',
      '--inner',
      'Content-Type: text/plain',
      '',
      'hi',
      '--inner--',
      '--outer--',
    ]);

    expect(structure).toEqual({ parts: 3, depth: 3, leafContentTypes: ['text/plain'] });
  });

  it('treats a base64-encoded attached message as a leaf', () => {
    const structure = scan([
      'Content-Type: multipart/mixed; boundary="b"',
      '',
      '--b',
      'Content-Type: message/rfc822',
      'Content-Transfer-Encoding: base64',
      '',
      'U3ViamVjdDogeA0KDQp5',
      '--b--',
    ]);

    expect(structure.leafContentTypes).toEqual(['message/rfc822']);
  });

  it('reads a message without MIME headers as one text/plain entity', () => {
    expect(scan(['Subject: plain', '', '--not a boundary'])).toEqual({
      parts: 1,
      depth: 0,
      leafContentTypes: ['text/plain'],
    });
  });
});
