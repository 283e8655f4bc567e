import { decodeEncodedWords } from './encoded-words';

describe('decodeEncodedWords', () => {
  it.each([
    ['plain text', 'plain text'],
    ['=?utf-8?B?R3LDvMOfZQ==?=', 'Grüße'],
    ['=?UTF-8?Q?Gr=C3=BC=C3=9Fe_Ann?=', 'Grüße Ann'],
    ['a =?utf-8?Q?b?= c', 'a b c'],
    ['=?utf-8?Q?a?= =?utf-8?Q?b?=', 'ab'],
    ['=?utf-8?B?8J+Y?=\r\n =?utf-8?B?gA==?=', '😀'],
    ['=?iso-8859-1?Q?caf=E9?=', 'café'],
    ['=?utf-8*en?Q?hi?=', 'hi'],
    ['=?x-unknown?Q?a=0Ab?=', 'a\nb'],
    ['=?utf-8?X?not-a-word?=', '=?utf-8?X?not-a-word?='],
  ])('%j → %j', (value, expected) => {
    expect(decodeEncodedWords(value)).toBe(expected);
  });
});
