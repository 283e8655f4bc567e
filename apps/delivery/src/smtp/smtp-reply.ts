import type { BounceClassification } from '@envoi/contracts-delivery';

/** An SMTP reply: basic code, RFC 3463 enhanced code when the server gave one, text. */
export interface SmtpReply {
  code: number;
  /** `class.subject.detail`, e.g. `5.1.1`; null when absent. */
  enhanced: string | null;
  text: string;
}

const REPLY = /^([2-5][0-9]{2})(?:[ -]|$)(.*)$/s;
const ENHANCED = /^([245])\.([0-9]{1,3})\.([0-9]{1,3})(?:\s+|$)/;

/**
 * Reads a server reply as nodemailer reports it (`550 5.1.1 <x@y>: user unknown`, possibly
 * several lines of a multi-line reply joined by newlines). Null when it is not a reply.
 */
export function parseSmtpReply(raw: string | undefined | null): SmtpReply | null {
  if (!raw) return null;
  const lines = raw
    .split(/\r?\n/)
    .map((line) => line.trim())
    .filter((line) => line !== '');
  const first = lines[0];
  const match = first ? REPLY.exec(first) : null;
  if (!match?.[1]) return null;
  const code = Number(match[1]);
  // The text of every line, without the code (and the enhanced code) each line repeats.
  const texts = lines.map((line) => line.replace(/^[2-5][0-9]{2}[ -]?/, ''));
  const enhancedMatch = ENHANCED.exec(texts[0] ?? '');
  let enhanced: string | null = null;
  if (enhancedMatch && enhancedMatch[1] === String(code)[0]) {
    enhanced = `${enhancedMatch[1]}.${enhancedMatch[2]}.${enhancedMatch[3]}`;
  }
  const text = texts
    .map((line) => (enhanced && line.startsWith(enhanced) ? line.slice(enhanced.length) : line))
    .map((line) => line.trim())
    .filter((line) => line !== '')
    .join(' ');
  return { code, enhanced, text };
}

/** One line for logs and `delivery_attempts`: `550 5.1.1 user unknown`. */
export function formatSmtpReply(reply: SmtpReply): string {
  return [String(reply.code), reply.enhanced, reply.text].filter(Boolean).join(' ');
}

/** The address does not exist or never will: a later send would bounce the same way. */
const HARD_TEXT =
  /\b(user unknown|unknown user|unknown recipient|no such (user|mailbox|recipient|address|account)|(mailbox|user|recipient|address|account) (unknown|not found|does not exist|doesn't exist|unavailable|disabled|invalid)|does not exist|invalid (recipient|mailbox|address|user)|recipient (address )?rejected|not a valid (mailbox|recipient|address)|no longer (active|available|in use)|account (has been )?(disabled|deleted|closed)|(does not|doesn't) have an? [\w.-]+ account|bad destination)\b/i;

/** Full mailboxes, sizes, throttling and policy: the same address may accept mail later. */
const SOFT_TEXT =
  /\b(mailbox (is )?full|over ?quota|quota exceeded|insufficient (storage|space)|too large|size limit|exceeds|try again|temporar(y|ily)|rate limit|too many|spam|blocked|block ?list|black ?list|policy|reputation|rejected for policy)\b/i;

/**
 * Hard or soft, for a permanent (5xx) failure. By the enhanced code first (RFC 3463):
 * `5.1.x` (bad destination mailbox or system) is hard; `5.2.x` (mailbox full, disabled for now),
 * `5.3.x` (mail system, `5.3.4` too big), `5.4.x` (routing), `5.5.x` (protocol), `5.6.x`
 * (content) and `5.7.x` (policy, reputation) are soft. A generic `5.0.0` is hard only when its
 * text says the user is unknown. Without an enhanced code the text decides, then the basic code:
 * 550 (mailbox unavailable), 551 (not local) and 553 (mailbox name not allowed) are hard, the
 * rest soft.
 */
export function classifyBounce(reply: SmtpReply): BounceClassification {
  if (reply.enhanced) {
    const [, subject = '', detail = ''] = reply.enhanced.split('.');
    if (subject === '1') return 'hard';
    if (subject === '0' && detail === '0') return HARD_TEXT.test(reply.text) ? 'hard' : 'soft';
    return 'soft';
  }
  if (HARD_TEXT.test(reply.text)) return 'hard';
  if (SOFT_TEXT.test(reply.text)) return 'soft';
  return reply.code === 550 || reply.code === 551 || reply.code === 553 ? 'hard' : 'soft';
}
