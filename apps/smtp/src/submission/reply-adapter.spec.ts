import { adaptReply } from './reply-adapter';

describe('adaptReply', () => {
  it('sends a text carrying its own enhanced code without another one', () => {
    expect(adaptReply({ code: 550, data: '5.7.1 not yours', context: undefined }, true)).toEqual({
      code: 550,
      data: '5.7.1 not yours',
      context: false,
      close: false,
    });
    expect(
      adaptReply({ code: 521, data: '5.7.1 Account disabled', context: undefined }, true).close,
    ).toBe(true);
  });

  it('leaves AUTH out of the EHLO capabilities until the session is encrypted', () => {
    const ehlo = {
      code: 250,
      data: ['localhost Nice to meet you', 'AUTH PLAIN LOGIN', 'STARTTLS'],
      context: false as const,
    };
    expect(adaptReply(ehlo, false).data).toEqual(['localhost Nice to meet you', 'STARTTLS']);
    expect(adaptReply(ehlo, true).data).toEqual(ehlo.data);
  });

  it('words the replies the reliability plan asks for', () => {
    expect(
      adaptReply(
        { code: 538, data: 'Error: Must issue a STARTTLS command first', context: undefined },
        false,
      ).data,
    ).toBe('5.7.11 Must issue a STARTTLS command first');
    expect(
      adaptReply({ code: 500, data: 'Error: command not recognized', context: 'BDAT' }, false),
    ).toMatchObject({
      code: 502,
      data: '5.5.1 BDAT is not supported (no CHUNKING)',
    });
    expect(
      adaptReply({ code: 421, data: 'Error: Command line too long', context: undefined }, false),
    ).toEqual({
      code: 500,
      data: '5.5.2 Line too long',
      context: false,
      close: true,
    });
  });

  it('keeps every other reply as smtp-server words it', () => {
    expect(
      adaptReply(
        { code: 504, data: 'Error: Unrecognized authentication type', context: 'AUTH' },
        true,
      ),
    ).toEqual({
      code: 504,
      data: 'Error: Unrecognized authentication type',
      context: 'AUTH',
      close: false,
    });
  });
});
