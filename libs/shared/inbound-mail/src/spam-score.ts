import type { ParsedInboundMessage } from './parsed-inbound-message';
import { headerValue } from './parsed-inbound-message';

/** One rule that fired, and what it added. */
export interface SpamSignal {
  rule: string;
  points: number;
}

export interface SpamAssessment {
  /** 0 and up; above 5 is suspect (notes 2.8). One decimal. */
  score: number;
  signals: SpamSignal[];
}

type SpamInput = Pick<
  ParsedInboundMessage,
  'headers' | 'from' | 'subject' | 'html' | 'leafContentTypes'
>;

const AUTHENTICATION_FAILURES: ReadonlyArray<{ rule: string; pattern: RegExp; points: number }> = [
  { rule: 'spf_fail', pattern: /\bspf\s*=\s*fail\b/i, points: 3 },
  { rule: 'spf_softfail', pattern: /\bspf\s*=\s*softfail\b/i, points: 1.5 },
  { rule: 'dkim_fail', pattern: /\bdkim\s*=\s*fail\b/i, points: 2 },
  { rule: 'dmarc_fail', pattern: /\bdmarc\s*=\s*fail\b/i, points: 2.5 },
];

const MANY_LINKS = 15;
const LINK = /\bhref\s*=\s*["']?\s*https?:\/\/([^/"'\s>:?#]+)/gi;
const IP_HOST = /^\d{1,3}(?:\.\d{1,3}){3}$/;

function upstreamScore(message: SpamInput): number | null {
  const value = Number.parseFloat(headerValue(message, 'X-Spam-Score'));
  return Number.isFinite(value) ? value : null;
}

function linkHosts(html: string): string[] {
  return [...html.matchAll(LINK)].map((match) => (match[1] ?? '').toLowerCase());
}

function isShouting(subject: string): boolean {
  const letters = subject.replace(/[^\p{L}]/gu, '');
  return (
    letters.length >= 8 && letters === letters.toUpperCase() && letters !== letters.toLowerCase()
  );
}

/**
 * An explainable spam heuristic. Every signal can only add points: the headers it reads can be
 * written by the sender, so none of them may lower the score. Signals: failing SPF/DKIM/DMARC in
 * `Authentication-Results`; no From, Date or Message-ID; an all-capitals subject; HTML without a
 * text alternative; many links, or links to bare IP addresses. An upstream filter's
 * `X-Spam-Score` raises the result to its value when higher.
 */
export function assessSpam(message: SpamInput): SpamAssessment {
  const signals: SpamSignal[] = [];
  const authentication = message.headers
    .filter((field) => field.name.toLowerCase() === 'authentication-results')
    .map((field) => field.value)
    .join('; ');
  for (const failure of AUTHENTICATION_FAILURES) {
    if (failure.pattern.test(authentication))
      signals.push({ rule: failure.rule, points: failure.points });
  }
  if (message.from.length === 0) signals.push({ rule: 'no_from', points: 2 });
  if (!headerValue(message, 'Date')) signals.push({ rule: 'no_date', points: 1 });
  if (!headerValue(message, 'Message-ID')) signals.push({ rule: 'no_message_id', points: 1.5 });
  if (isShouting(message.subject)) signals.push({ rule: 'subject_all_caps', points: 1.5 });
  if (
    message.leafContentTypes.includes('text/html') &&
    !message.leafContentTypes.includes('text/plain')
  ) {
    signals.push({ rule: 'html_only', points: 1 });
  }
  const hosts = linkHosts(message.html);
  if (hosts.length > MANY_LINKS) signals.push({ rule: 'many_links', points: 1 });
  if (hosts.some((host) => IP_HOST.test(host)))
    signals.push({ rule: 'ip_address_link', points: 2 });

  const heuristic = signals.reduce((total, signal) => total + signal.points, 0);
  const upstream = upstreamScore(message);
  if (upstream !== null && upstream > heuristic) {
    signals.push({ rule: 'upstream_x_spam_score', points: upstream - heuristic });
  }
  const score = Math.max(heuristic, upstream ?? 0);
  return { score: Math.round(score * 10) / 10, signals };
}
