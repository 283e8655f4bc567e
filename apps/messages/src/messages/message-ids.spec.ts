import {
  messageIdHeader,
  messageIdHeaderKey,
  parseMessageRef,
  uuidv7,
  uuidv7s,
} from './message-ids';

const UUID_V7 = /^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;

describe('uuidv7', () => {
  it('puts the milliseconds first, then the version and variant around random bits', () => {
    const id = uuidv7(0x0189_1234_5678, Buffer.alloc(10, 0xff));

    expect(id).toBe('01891234-5678-7fff-bfff-ffffffffffff');
    expect(uuidv7(0, Buffer.alloc(10, 0))).toBe('00000000-0000-7000-8000-000000000000');
  });

  it('makes distinct, time-ordered version 7 uuids', () => {
    const earlier = uuidv7(Date.now() - 1);
    const ids = Array.from({ length: 1_000 }, () => uuidv7());

    expect(ids.every((id) => UUID_V7.test(id))).toBe(true);
    expect(new Set(ids).size).toBe(ids.length);
    expect(ids.every((id) => id > earlier)).toBe(true);
  });

  it('refuses timestamps it cannot encode', () => {
    expect(() => uuidv7(-1)).toThrow(RangeError);
    expect(() => uuidv7(2 ** 48)).toThrow(RangeError);
    expect(() => uuidv7(1, Buffer.alloc(4))).toThrow(RangeError);
  });
});

describe('message ids', () => {
  const id = '01891234-5678-7abc-8def-0123456789ab';

  it('formats the header', () => {
    expect(messageIdHeader(id, 'example.com')).toBe(`<${id}@example.com>`);
  });

  it.each([
    [id, { id }],
    [` ${id.toUpperCase()} `, { id }],
    [`<${id}@Example.COM>`, { id, domain: 'example.com' }],
    [`${id}@example.com`, { id, domain: 'example.com' }],
  ])('reads %j', (raw, expected) => {
    expect(parseMessageRef(raw)).toEqual(expected);
  });

  it.each(['', 'nope', `<${id}>`, `<${id}@>`, `<x${id.slice(1)}@a.com>`, `<${id}@a b.com>`])(
    'refuses %j',
    (raw) => {
      expect(parseMessageRef(raw)).toBeNull();
    },
  );
});

describe('uuidv7s', () => {
  it('makes as many distinct version 7 uuids of the given millisecond', () => {
    const ids = uuidv7s(500, 0x0189_1234_5678);

    expect(ids).toHaveLength(500);
    expect(ids.every((id) => UUID_V7.test(id) && id.startsWith('01891234-5678-7'))).toBe(true);
    expect(new Set(ids).size).toBe(ids.length);
    expect(uuidv7s(0)).toEqual([]);
  });

  it('never hands out the same random bits twice, across many pools of them', () => {
    const ids = [
      ...Array.from({ length: 2_000 }, () => uuidv7(0x0189_1234_5678)),
      ...Array.from({ length: 50 }, () => uuidv7s(100, 0x0189_1234_5678)).flat(),
    ];

    expect(ids.every((id) => UUID_V7.test(id))).toBe(true);
    expect(new Set(ids).size).toBe(7_000);
  });
});

describe('messageIdHeaderKey', () => {
  it('compares a Message-ID header trimmed, lowercase, in brackets given or not', () => {
    expect(messageIdHeaderKey(' <Client.1@Example.TEST> ')).toBe('<client.1@example.test>');
    expect(messageIdHeaderKey('client.1@example.test')).toBe('<client.1@example.test>');
  });
});
