import { controlFields, ControlHeaderError, readControlOptions } from './control-headers';
import { readHeaderBlock } from './header-block';

function optionsOf(headers: string) {
  const block = readHeaderBlock(Buffer.from(`From: a@x.test\r\n${headers}\r\nbody`));
  if (!block) throw new Error('no header block');
  return readControlOptions(controlFields(block));
}

function refusal(headers: string): ControlHeaderError {
  try {
    optionsOf(headers);
  } catch (error) {
    if (error instanceof ControlHeaderError) return error;
    throw error;
  }
  throw new Error('accepted');
}

describe('readControlOptions', () => {
  it('is empty without control headers', () => {
    expect(optionsOf('Subject: x\r\nX-Mailer: y\r\n')).toEqual({});
  });

  it('reads every control header, names in any case and both spellings', () => {
    expect(
      optionsOf(
        [
          'AhaSend-Track-Opens: TRUE',
          'ahasend-track-clicks: false',
          'AHASEND-SANDBOX: 1',
          'AhaSend-Sandbox-Result: Bounce',
          'ahasend-message-retention: 7',
          'ahasend-message-data-retention: 0',
          'ahasend-tags: one, Two ,,three',
          '',
        ].join('\r\n'),
      ),
    ).toEqual({
      tracking: { open: true, click: false },
      sandbox: true,
      sandbox_result: 'bounce',
      retention: { metadata: 7, data: 0 },
      tags: ['one', 'Two', 'three'],
    });
    expect(optionsOf('ahasend-metadata-retention: 30\r\nahasend-data-retention: 30\r\n')).toEqual({
      retention: { metadata: 30, data: 30 },
    });
  });

  it('reads a folded value', () => {
    expect(optionsOf('ahasend-tags: a,\r\n b\r\n')).toEqual({ tags: ['a', 'b'] });
  });

  it('adds up tags headers and accepts a repeated header with the same value', () => {
    expect(
      optionsOf(
        'ahasend-tags: a\r\nAhaSend-Tags: b, a\r\nahasend-sandbox: true\r\nahasend-sandbox: 1\r\n',
      ),
    ).toEqual({ tags: ['a', 'b'], sandbox: true });
  });

  it.each([
    ['AhaSend-Track-Opens: yes', 'AhaSend-Track-Opens', 'must be true or false'],
    ['ahasend-track-clicks: 1', 'ahasend-track-clicks', 'must be true or false'],
    ['AhaSend-Sandbox: maybe', 'AhaSend-Sandbox', 'must be true or 1'],
    ['AhaSend-Sandbox-Result: explode', 'AhaSend-Sandbox-Result', 'must be one of'],
    ['ahasend-metadata-retention: 0', 'ahasend-metadata-retention', 'from 1 to 30'],
    ['ahasend-message-retention: 31', 'ahasend-message-retention', 'from 1 to 30'],
    ['ahasend-data-retention: -1', 'ahasend-data-retention', 'from 0 to 30'],
    ['ahasend-data-retention: 1.5', 'ahasend-data-retention', 'from 0 to 30'],
    ['ahasend-tags: ' + 'x'.repeat(256), 'ahasend-tags', 'at most 255 characters'],
    [
      'ahasend-tags: ' + Array.from({ length: 21 }, (_, index) => `t${index}`).join(','),
      'ahasend-tags',
      'at most 20 tags',
    ],
    [
      'ahasend-track-opens: true\r\nAhaSend-Track-Opens: false',
      'AhaSend-Track-Opens',
      'more than once',
    ],
    [
      'ahasend-metadata-retention: 3\r\nahasend-message-retention: 4',
      'ahasend-message-retention',
      'more than once',
    ],
  ])('refuses %j naming the header', (headers, header, rule) => {
    const error = refusal(`${headers}\r\n`);
    expect(error.header).toBe(header);
    expect(error.message).toContain(header);
    expect(error.message).toContain(rule);
  });
});
