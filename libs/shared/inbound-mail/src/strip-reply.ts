/**
 * Reply stripping: the text a person wrote above the quoted conversation. The body is cut at
 * the first line that starts the quoted part, then trailing `>` quotes and a `-- ` signature
 * are removed. Quoted parts recognised:
 * - attribution lines "On <date>, <name> wrote:" in English, French, German, Spanish, Italian,
 *   Dutch, Portuguese and Scandinavian forms, including Gmail's wrapping over up to 3 lines and
 *   Apple Mail's "On <date>, at <time>, <name> wrote:";
 * - Outlook's "-----Original Message-----" (and translations), its underscore rule, and its
 *   "From: / Sent: / To: / Subject:" block (also the `*From:*` of Outlook on the web);
 * - forwarded messages ("Begin forwarded message:", "---------- Forwarded message ---------").
 */

const ATTRIBUTION_START = /^(on|le|am|el|il|op|em|den|på|dne)\s/i;
const ATTRIBUTION_END =
  /(wrote|a écrit|schrieb|escribió|ha scritto|schreef|escreveu|skrev|napsal)(\s[^:]*)?\s?:\s*$/i;
const ORIGINAL_MESSAGE =
  /^-{2,}\s*(original message|ursprüngliche nachricht|message d'origine|mensaje original|messaggio originale|oorspronkelijk bericht|mensagem original)\s*-{2,}\s*$/i;
const FORWARDED = /^(begin forwarded message:|-{2,}\s*forwarded message\s*-{2,})\s*$/i;
const UNDERSCORE_RULE = /^_{10,}\s*$/;
const OUTLOOK_FROM = /^(from|de|von|van|da|från|fra):\s/i;
const OUTLOOK_FIELD =
  /^(sent|date|envoyé|gesendet|datum|enviado|fecha|verzonden|inviato|data|to|à|an|para|aan|a|till|til|subject|objet|betreff|asunto|onderwerp|oggetto|assunto|ämne|emne):/i;
const ATTRIBUTION_MAX_LINES = 3;
const OUTLOOK_BLOCK_LINES = 6;

/** Outlook on the web bolds the field names of its header block: `*From:* …`. */
function withoutBold(line: string): string {
  return line.trim().replace(/^\*([^*]+:)\*/, '$1');
}

function isAttributionAt(lines: string[], index: number): boolean {
  const first = lines[index]?.trim() ?? '';
  if (!ATTRIBUTION_START.test(first)) return false;
  let joined = '';
  for (
    let offset = 0;
    offset < ATTRIBUTION_MAX_LINES && index + offset < lines.length;
    offset += 1
  ) {
    const line = (lines[index + offset] ?? '').trim();
    if (offset > 0 && line === '') return false;
    joined = joined ? `${joined} ${line}` : line;
    if (ATTRIBUTION_END.test(joined)) return true;
  }
  return false;
}

function isOutlookHeaderBlockAt(lines: string[], index: number): boolean {
  if (!OUTLOOK_FROM.test(withoutBold(lines[index] ?? ''))) return false;
  const following = lines.slice(index + 1, index + 1 + OUTLOOK_BLOCK_LINES).map(withoutBold);
  return following.filter((line) => OUTLOOK_FIELD.test(line)).length >= 2;
}

function startsQuotedPart(lines: string[], index: number): boolean {
  const line = (lines[index] ?? '').trim();
  return (
    ORIGINAL_MESSAGE.test(line) ||
    FORWARDED.test(line) ||
    UNDERSCORE_RULE.test(line) ||
    isAttributionAt(lines, index) ||
    isOutlookHeaderBlockAt(lines, index)
  );
}

function isQuoteOrBlank(line: string): boolean {
  const trimmed = line.trim();
  return trimmed === '' || trimmed.startsWith('>');
}

/** The plain body without the quoted conversation and the signature. */
export function stripReply(plainBody: string): string {
  const lines = plainBody.replace(/\r\n?/g, '\n').split('\n');
  let end = lines.length;
  for (let index = 0; index < lines.length; index += 1) {
    if (startsQuotedPart(lines, index)) {
      end = index;
      break;
    }
  }
  while (end > 0 && isQuoteOrBlank(lines[end - 1] ?? '')) end -= 1;
  const kept = lines.slice(0, end);
  const signature = kept.findIndex((line) => line === '-- ' || line === '--');
  return (signature === -1 ? kept : kept.slice(0, signature)).join('\n').trim();
}
