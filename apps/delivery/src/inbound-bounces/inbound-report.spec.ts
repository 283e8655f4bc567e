import { readFileSync } from 'node:fs';
import path from 'node:path';

import { analyseMail, type MailParts } from './inbound-report';
import { parseInboundMail } from './parse-inbound-mail';

const sample = (name: string) =>
  parseInboundMail(readFileSync(path.join(__dirname, 'corpus', `${name}.eml`)));

function mail(parts: Partial<MailParts>): MailParts {
  return { headers: new Map(), text: '', attachments: [], originals: [], ...parts };
}

describe('analyseMail', () => {
  it('reads a DSN recipient: Status, the diagnostic reply, the remote and reporting MTAs', async () => {
    expect(await sample('postfix-user-unknown')).toEqual({
      kind: 'bounce',
      reportingMta: 'mail.example.org',
      recipients: [
        {
          recipient: 'jane@example.org',
          classification: 'hard',
          reply: {
            code: 550,
            enhanced: '5.1.1',
            text: '<jane@example.org>: Recipient address rejected: User unknown in virtual mailbox table',
          },
          remoteMta: 'mx1.example.org',
        },
      ],
    });
  });

  it('keeps only the failed recipients of a DSN that also reports a delay', async () => {
    const report = await sample('rfc3464-multi-recipient');
    expect(report.kind === 'bounce' && report.recipients.map((r) => r.recipient)).toEqual([
      'arathib@vnet.ibm.com',
    ]);
  });

  it('takes a diagnostic code more precise than a generic x.0.0 Status', () => {
    const report = analyseMail(
      mail({
        text: 'Final-Recipient: rfc822; a@example.com\nAction: failed\nStatus: 5.0.0\nDiagnostic-Code: smtp; 550 5.1.1 gone\n',
      }),
    );
    expect(report).toMatchObject({
      kind: 'bounce',
      recipients: [{ classification: 'hard', reply: { enhanced: '5.1.1' } }],
    });
  });

  it('reads an ARF report with the original Return-Path and Message-ID', async () => {
    expect(await sample('arf-rfc5965-example')).toEqual({
      kind: 'complaint',
      feedbackType: 'abuse',
      userAgent: 'SomeGenerator/1.0',
      recipient: 'olga@example.net',
      originalReturnPath: 'bounce+0190a1b2-3c4d-7e5f-8a9b-0c1d2e3f4a5b@bounces.envoi.test',
      originalMessageId: '<0190a1b2-3c4d-7e5f-8a9b-0c1d2e3f4a5b@shop.example>',
    });
  });

  it('is no report for an auto-reply, a not-spam report or a plain reply', async () => {
    for (const name of ['ooo-auto-submitted', 'arf-not-spam', 'human-reply']) {
      expect((await sample(name)).kind).toBe('not_a_report');
    }
  });

  it('reads a bounce of a mail system marked auto-replied (Exim) as a bounce', async () => {
    expect((await sample('exim-user-unknown')).kind).toBe('bounce');
  });

  it('survives garbage', async () => {
    expect((await parseInboundMail(Buffer.from('\u0000\u0001 not mail at all'))).kind).toBe(
      'not_a_report',
    );
  });
});
