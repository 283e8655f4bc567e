import { readFileSync } from 'node:fs';
import { join } from 'node:path';

import { stripReply } from './strip-reply';

function reply(name: string): string {
  return readFileSync(join(__dirname, '__fixtures__', 'replies', `${name}.txt`), 'utf8');
}

describe('stripReply', () => {
  it.each([
    ['gmail', "Thanks, that fixed it. I'll close the ticket.\n\nBest,\nMaria"],
    ['gmail-wrapped', 'Yes, Thursday works for us.'],
    ['gmail-french', "Merci beaucoup, c'est parfait."],
    ['gmail-german', 'Danke, das hat funktioniert.'],
    [
      'outlook-desktop',
      'Hi team,\n\nPlease find the signed contract attached.\n\nKind regards,\nPeter Jansen\nFinance Department',
    ],
    ['outlook-original-message', 'Approved.'],
    [
      'outlook-web',
      'Sounds good, go ahead with option B.\n\nSam\n\nGet Outlook for iOS<https://aka.ms/o0ukef>',
    ],
    ['outlook-web-no-rule', 'Sounds good, go ahead with option B.'],
    ['apple-mail', 'I can confirm the delivery address is correct.\n\nSent from my iPhone'],
    ['apple-mail-desktop', 'Perfect, see you then.\n\nAnna'],
    ['apple-forward', 'Forwarding this to you, see below.'],
    ['signature', 'Please call me back tomorrow.'],
    ['bottom-quote', 'Got it, thanks!'],
  ])('keeps only the new text of the %s sample', (sample, expected) => {
    expect(stripReply(reply(sample))).toBe(expected);
  });

  it.each([
    'El lun, 6 may 2024 a las 13:15, Soporte (<support@example.com>) escribió:',
    'Op ma 6 mei 2024 om 13:15 schreef Support <support@example.com>:',
    'Il giorno lun 6 mag 2024 alle ore 13:15 Support <support@example.com> ha scritto:',
    'Em seg., 6 de mai. de 2024 às 13:15, Support <support@example.com> escreveu:',
    'Den mån 6 maj 2024 kl 13:15 skrev Support <support@example.com>:',
  ])('cuts at the attribution line %p', (attribution) => {
    expect(stripReply(`Gracias!\n\n${attribution}\n\n> Hola`)).toBe('Gracias!');
  });

  it('keeps answers written between quotes', () => {
    expect(stripReply(reply('inline-answers'))).toBe(
      '> Which size do you need?\nLarge, please.\n\n> Which colour?\nBlue.',
    );
  });

  it('handles CRLF line ends as LF', () => {
    expect(stripReply(reply('gmail').replace(/\n/g, '\r\n'))).toBe(
      "Thanks, that fixed it. I'll close the ticket.\n\nBest,\nMaria",
    );
  });

  it('does not cut at a sentence that merely starts with "On" or mentions writing', () => {
    const body = 'On Monday I wrote the report.\nOn second thought: call me.\nFrom: the team';
    expect(stripReply(body)).toBe(body);
  });

  it('does not join an attribution across a blank line', () => {
    const body = 'On the whole it works\n\nand he wrote:';
    expect(stripReply(body)).toBe(body);
  });

  it('returns an empty reply for an empty body', () => {
    expect(stripReply('')).toBe('');
  });
});
