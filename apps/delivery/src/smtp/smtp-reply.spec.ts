import { classifyBounce, formatSmtpReply, parseSmtpReply, type SmtpReply } from './smtp-reply';

function reply(raw: string): SmtpReply {
  const parsed = parseSmtpReply(raw);
  if (!parsed) throw new Error(`not a reply: ${raw}`);
  return parsed;
}

describe('parseSmtpReply', () => {
  it('reads the code, the enhanced code and the text', () => {
    expect(reply('550 5.1.1 <a@b.test>: Recipient address rejected: User unknown')).toEqual({
      code: 550,
      enhanced: '5.1.1',
      text: '<a@b.test>: Recipient address rejected: User unknown',
    });
    expect(reply('421 Service not available')).toEqual({
      code: 421,
      enhanced: null,
      text: 'Service not available',
    });
  });

  it('joins the lines of a multi-line reply', () => {
    expect(reply('550-5.7.1 Blocked\n550 5.7.1 see https://example.test')).toEqual({
      code: 550,
      enhanced: '5.7.1',
      text: 'Blocked see https://example.test',
    });
  });

  it('ignores an enhanced code of another class than the reply', () => {
    expect(reply('550 4.1.1 odd').enhanced).toBeNull();
  });

  it('refuses what is not a reply', () => {
    expect(parseSmtpReply('Connection closed unexpectedly')).toBeNull();
    expect(parseSmtpReply('')).toBeNull();
    expect(parseSmtpReply(undefined)).toBeNull();
  });

  it('formats one line', () => {
    expect(formatSmtpReply(reply('250 2.0.0 Ok: queued as 123'))).toBe(
      '250 2.0.0 Ok: queued as 123',
    );
    expect(formatSmtpReply(reply('250 OK'))).toBe('250 OK');
  });
});

describe('classifyBounce', () => {
  it.each([
    ['550 5.1.1 user unknown', 'hard'],
    ['550 5.1.2 bad destination system', 'hard'],
    ['556 5.1.10 null MX', 'hard'],
    ['550 5.0.0 <x@y.test>: User unknown in local recipient table', 'hard'],
    ['550 5.0.0 Requested action not taken', 'soft'],
    ['550 Requested action not taken: mailbox unavailable', 'hard'],
    ['550 No such user here', 'hard'],
    ['550 rejected', 'hard'],
    ['551 User not local', 'hard'],
    ['553 mailbox name not allowed', 'hard'],
    ['552 5.2.2 Mailbox full', 'soft'],
    ['550 5.2.1 mailbox disabled, not accepting messages', 'soft'],
    ['552 5.3.4 Message too big for system', 'soft'],
    ['550 5.7.1 Message rejected due to policy', 'soft'],
    ['554 5.7.1 Service unavailable; client host blocked', 'soft'],
    ['550 Message rejected as spam', 'soft'],
    ['554 Transaction failed', 'soft'],
    ['552 Requested mail action aborted: exceeded storage allocation', 'soft'],
  ])('%s → %s', (raw, expected) => {
    expect(classifyBounce(reply(raw))).toBe(expected);
  });
});
