import { readFileSync } from 'node:fs';
import path from 'node:path';

import type { InboundReport } from './inbound-report';
import { parseInboundMail } from './parse-inbound-mail';

type Outcome = 'hard' | 'soft' | 'delayed' | 'complaint' | 'not-a-bounce';

interface Expected {
  outcome: Outcome;
  recipient: string | null;
}

const CORPUS = path.join(__dirname, 'corpus');
const EXPECTED = JSON.parse(readFileSync(path.join(CORPUS, 'expected.json'), 'utf8')) as Record<
  string,
  Expected
>;

/** The corpus must classify at least this share of its samples right (issue 17). */
const MIN_ACCURACY = 0.95;

/** What a report comes to, in the corpus's terms (a bounce: its first recipient). */
function outcomeOf(report: InboundReport): Expected {
  switch (report.kind) {
    case 'bounce': {
      const first = report.recipients[0];
      return { outcome: first?.classification ?? 'soft', recipient: first?.recipient ?? null };
    }
    case 'delayed':
      return { outcome: 'delayed', recipient: report.recipients[0] ?? null };
    case 'complaint':
      return { outcome: 'complaint', recipient: report.recipient };
    case 'not_a_report':
      return { outcome: 'not-a-bounce', recipient: null };
  }
}

describe('inbound bounce and complaint corpus', () => {
  it('holds at least 40 samples, each with its expected outcome', () => {
    expect(Object.keys(EXPECTED).length).toBeGreaterThanOrEqual(40);
  });

  it(`classifies at least ${MIN_ACCURACY * 100} % of the samples right (outcome and recipient)`, async () => {
    const misses: string[] = [];
    const names = Object.keys(EXPECTED).sort();
    for (const name of names) {
      const expected = EXPECTED[name];
      const actual = outcomeOf(await parseInboundMail(readFileSync(path.join(CORPUS, name))));
      if (actual.outcome !== expected?.outcome || actual.recipient !== expected.recipient) {
        misses.push(`${name}: expected ${JSON.stringify(expected)}, got ${JSON.stringify(actual)}`);
      }
    }
    const accuracy = (names.length - misses.length) / names.length;
    process.stdout.write(
      `inbound corpus: ${names.length - misses.length}/${names.length} right ` +
        `(${(accuracy * 100).toFixed(1)} %)${misses.map((miss) => `\n  miss ${miss}`).join('')}\n`,
    );
    expect(accuracy).toBeGreaterThanOrEqual(MIN_ACCURACY);
  });
});
