import { fieldsNamed, readHeaderBlock, withFieldsOnTop, withoutFields } from './header-block';

function block(text: string) {
  const read = readHeaderBlock(Buffer.from(text, 'latin1'));
  if (!read) throw new Error('no header block');
  return read;
}

describe('readHeaderBlock', () => {
  it('reads fields with their byte ranges and the CRLF line ending', () => {
    const text = 'From: a@x.test\r\nSubject: Hi\r\n\r\nbody\r\n';
    const read = block(text);
    expect(read.eol).toBe('\r\n');
    expect(read.fields.map((field) => [field.name, field.value])).toEqual([
      ['From', 'a@x.test'],
      ['Subject', 'Hi'],
    ]);
    expect(text.slice(read.fields[1]?.start, read.fields[1]?.end)).toBe('Subject: Hi\r\n');
    expect(text.slice(read.end)).toBe('\r\nbody\r\n');
  });

  it('unfolds continuation lines into the field they continue (LF line endings)', () => {
    const read = block('Subject: a\n  long\n\tvalue\nTo: b@x.test\n\nbody');
    expect(read.eol).toBe('\n');
    expect(read.fields[0]).toMatchObject({ name: 'Subject', value: 'a long value', start: 0 });
    expect(read.fields[1]?.start).toBe('Subject: a\n  long\n\tvalue\n'.length);
  });

  it('takes a message without a body as all header', () => {
    const read = block('From: a@x.test\r\nSubject: only headers');
    expect(read.fields).toHaveLength(2);
    expect(read.end).toBe('From: a@x.test\r\nSubject: only headers'.length);
  });

  it('refuses what has no parseable header block', () => {
    for (const text of [
      '',
      '\r\nbody',
      'not a header line\r\n\r\nbody',
      ' continuation first: x\r\n\r\n',
      'From: a@x.test\r\nbroken line\r\n\r\n',
      'Bad Name: x\r\n\r\n',
    ]) {
      expect(readHeaderBlock(Buffer.from(text))).toBeUndefined();
    }
  });

  it('keeps 8-bit bytes as they are (offsets are byte offsets)', () => {
    const raw = Buffer.concat([
      Buffer.from('Subject: '),
      Buffer.from([0xc3, 0xa9]),
      Buffer.from('\r\nX-A: 1\r\n\r\n'),
    ]);
    const read = readHeaderBlock(raw);
    const field = read?.fields[1];
    expect(raw.subarray(field?.start, field?.end).toString()).toBe('X-A: 1\r\n');
  });

  it('finds fields by name case-insensitively, duplicates in order', () => {
    const read = block('x-tag: 1\r\nX-Tag: 2\r\nOther: 3\r\n\r\n');
    expect(fieldsNamed(read, 'X-TAG').map((field) => field.value)).toEqual(['1', '2']);
  });
});

describe('withoutFields and withFieldsOnTop', () => {
  it('removes exactly the given fields, folded lines included, and leaves every other byte', () => {
    const text = 'A: 1\r\nB: 2\r\n  folded\r\nC: 3\r\n\r\nbody B: 2\r\n';
    const read = block(text);
    const removed = fieldsNamed(read, 'b');
    const raw = Buffer.from(text);
    expect(withoutFields(raw, removed).toString()).toBe('A: 1\r\nC: 3\r\n\r\nbody B: 2\r\n');
    expect(withoutFields(raw, [])).toBe(raw);
  });

  it('adds lines at the top with the given line ending', () => {
    const raw = Buffer.from('A: 1\n\nbody');
    expect(withFieldsOnTop(raw, ['X: 1', 'Y: 2'], '\n').toString()).toBe(
      'X: 1\nY: 2\nA: 1\n\nbody',
    );
  });
});
