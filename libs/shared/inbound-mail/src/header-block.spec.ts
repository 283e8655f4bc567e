import { firstMailboxAddress, topHeaderFields } from './header-block';

describe('topHeaderFields', () => {
  it('reads the header block only, unfolded and trimmed', () => {
    const raw = Buffer.from(
      'Subject: a long\r\n\tfolded subject\r\nMessage-ID:  <m1@x.example> \r\n\r\nBody: not a header\r\n',
    );
    expect(topHeaderFields(raw)).toEqual([
      { name: 'Subject', value: 'a long folded subject' },
      { name: 'Message-ID', value: '<m1@x.example>' },
    ]);
  });

  it('takes bare LF line ends and a message without a body', () => {
    expect(topHeaderFields(Buffer.from('From: a@b.example\nSubject: x'))).toEqual([
      { name: 'From', value: 'a@b.example' },
      { name: 'Subject', value: 'x' },
    ]);
  });
});

describe('firstMailboxAddress', () => {
  it.each([
    ['Ann <ann@remote.example>', 'ann@remote.example'],
    ['"Doe, John" <john@x.example>, other@y.example', 'john@x.example'],
    ['plain@x.example (Plain Person)', 'plain@x.example'],
    ['Team: first@x.example, second@x.example;', 'first@x.example'],
    ['<@relay.example:routed@x.example>', 'routed@x.example'],
    ['=?UTF-8?Q?Jos=C3=A9?= <jose@x.example>', 'jose@x.example'],
    ['undisclosed-recipients:;', ''],
    ['', ''],
  ])('%s → %s', (value, expected) => {
    expect(firstMailboxAddress(value)).toBe(expected);
  });
});
