import { isRoutedOrQuotedRecipient } from './relay-syntax';

describe('isRoutedOrQuotedRecipient', () => {
  it.each([
    'RCPT TO:<@a.example,@b.example:u@c.example>',
    'rcpt to: <@a.example:u@c.example>',
    'RCPT TO:<"u@victim.example"@customer.example>',
    'RCPT TO:<"u"@customer.example> NOTIFY=NEVER',
  ])('is true for %s', (line) => {
    expect(isRoutedOrQuotedRecipient(line)).toBe(true);
  });

  it.each(['RCPT TO:<u@customer.example>', 'RCPT TO:<u%x@customer.example>', 'MAIL FROM:<@a:u@b>'])(
    'is false for %s',
    (line) => {
      expect(isRoutedOrQuotedRecipient(line)).toBe(false);
    },
  );
});
