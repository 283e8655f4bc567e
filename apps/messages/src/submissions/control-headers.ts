import {
  RETENTION_DATA_DAYS,
  RETENTION_METADATA_DAYS,
  SANDBOX_RESULTS,
  type SandboxResult,
  type SendOptionsBody,
  TAG_MAX_LENGTH,
  TAGS_MAX,
} from '@envoi/contracts-messages';

import { type HeaderBlock, type HeaderField } from './header-block';

/** What the control headers set: the send options they override the account's defaults with. */
export type ControlOptions = Pick<
  SendOptionsBody,
  'tracking' | 'sandbox' | 'sandbox_result' | 'retention' | 'tags'
>;

/** A control header with a value outside its rule; `header` is its name as the client wrote it. */
export class ControlHeaderError extends Error {
  constructor(
    readonly header: string,
    rule: string,
  ) {
    super(`control header ${header}: ${rule}`);
    this.name = 'ControlHeaderError';
  }
}

type Setting = 'trackOpens' | 'trackClicks' | 'sandbox' | 'sandboxResult' | 'metadata' | 'data';
type ControlName = Setting | 'tags';

/** Platform notes 3.2: each control header's spellings (lowercase) and what it sets. */
const CONTROL_HEADERS: ReadonlyMap<string, ControlName> = new Map([
  ['ahasend-track-opens', 'trackOpens'],
  ['ahasend-track-clicks', 'trackClicks'],
  ['ahasend-sandbox', 'sandbox'],
  ['ahasend-sandbox-result', 'sandboxResult'],
  ['ahasend-metadata-retention', 'metadata'],
  ['ahasend-message-retention', 'metadata'],
  ['ahasend-data-retention', 'data'],
  ['ahasend-message-data-retention', 'data'],
  ['ahasend-tags', 'tags'],
]);

/** What the header sets, or undefined when it is not a control header. */
function controlOf(name: string): ControlName | undefined {
  return CONTROL_HEADERS.get(name.toLowerCase());
}

/** Whether the header is one of the control headers of platform notes 3.2 (any spelling, any case). */
export function isControlHeader(name: string): boolean {
  return controlOf(name) !== undefined;
}

/** The block's control header fields: to be read, then stripped before delivery. */
export function controlFields(block: HeaderBlock): HeaderField[] {
  return block.fields.filter((field) => isControlHeader(field.name));
}

function trueFalse(header: string, value: string): boolean {
  const lower = value.toLowerCase();
  if (lower === 'true') return true;
  if (lower === 'false') return false;
  throw new ControlHeaderError(header, 'must be true or false');
}

/** `AhaSend-Sandbox`: true or 1 (false and 0 leave the message real). */
function sandboxFlag(header: string, value: string): boolean {
  const lower = value.toLowerCase();
  if (lower === 'true' || lower === '1') return true;
  if (lower === 'false' || lower === '0') return false;
  throw new ControlHeaderError(header, 'must be true or 1');
}

function sandboxResult(header: string, value: string): SandboxResult {
  const result = SANDBOX_RESULTS.find((known) => known === value.toLowerCase());
  if (!result) throw new ControlHeaderError(header, `must be one of ${SANDBOX_RESULTS.join(', ')}`);
  return result;
}

function days(header: string, value: string, bounds: { min: number; max: number }): number {
  const count = /^\d{1,3}$/.test(value) ? Number(value) : Number.NaN;
  if (!(count >= bounds.min && count <= bounds.max)) {
    throw new ControlHeaderError(
      header,
      `must be a whole number of days from ${bounds.min} to ${bounds.max}`,
    );
  }
  return count;
}

/** A comma list, with the API's tag limits; case kept. */
function tagList(header: string, value: string): string[] {
  const tags = value
    .split(',')
    .map((tag) => tag.trim())
    .filter((tag) => tag !== '');
  if (tags.some((tag) => tag.length > TAG_MAX_LENGTH)) {
    throw new ControlHeaderError(header, `tags must be at most ${TAG_MAX_LENGTH} characters long`);
  }
  return tags;
}

/** What the single-valued control headers set. */
interface Settings {
  trackOpens?: boolean;
  trackClicks?: boolean;
  sandbox?: boolean;
  sandboxResult?: SandboxResult;
  metadata?: number;
  data?: number;
}

/** Sets `key`; a header given again (in either spelling) must repeat the value. */
function setOnce<K extends keyof Settings>(
  settings: Settings,
  key: K,
  value: NonNullable<Settings[K]>,
  header: string,
): void {
  const earlier = settings[key];
  if (earlier !== undefined && earlier !== value) {
    throw new ControlHeaderError(header, 'is given more than once with different values');
  }
  settings[key] = value;
}

function applySetting(settings: Settings, name: Setting, field: HeaderField): void {
  const { name: header, value } = field;
  switch (name) {
    case 'trackOpens':
    case 'trackClicks':
      return setOnce(settings, name, trueFalse(header, value), header);
    case 'sandbox':
      return setOnce(settings, name, sandboxFlag(header, value), header);
    case 'sandboxResult':
      return setOnce(settings, name, sandboxResult(header, value), header);
    case 'metadata':
      return setOnce(settings, name, days(header, value, RETENTION_METADATA_DAYS), header);
    case 'data':
      return setOnce(settings, name, days(header, value, RETENTION_DATA_DAYS), header);
  }
}

/**
 * The options the control headers set (platform notes 3.2), validated with the API's limits.
 * A header given more than once (in either spelling) must give the same value each time; tags
 * headers add up. Throws ControlHeaderError naming the first header that breaks its rule.
 */
export function readControlOptions(fields: readonly HeaderField[]): ControlOptions {
  const settings: Settings = {};
  const tags = new Set<string>();
  for (const field of fields) {
    const name = controlOf(field.name);
    if (name === undefined) continue;
    if (name !== 'tags') {
      applySetting(settings, name, field);
      continue;
    }
    for (const tag of tagList(field.name, field.value)) tags.add(tag);
    if (tags.size > TAGS_MAX) {
      throw new ControlHeaderError(field.name, `must list at most ${TAGS_MAX} tags`);
    }
  }
  return controlOptions(settings, [...tags]);
}

function controlOptions(settings: Settings, tags: string[]): ControlOptions {
  const { trackOpens: open, trackClicks: click, metadata, data } = settings;
  return {
    ...(open !== undefined || click !== undefined
      ? {
          tracking: {
            ...(open !== undefined ? { open } : {}),
            ...(click !== undefined ? { click } : {}),
          },
        }
      : {}),
    ...(settings.sandbox !== undefined ? { sandbox: settings.sandbox } : {}),
    ...(settings.sandboxResult !== undefined ? { sandbox_result: settings.sandboxResult } : {}),
    ...(metadata !== undefined || data !== undefined
      ? {
          retention: {
            ...(metadata !== undefined ? { metadata } : {}),
            ...(data !== undefined ? { data } : {}),
          },
        }
      : {}),
    ...(tags.length > 0 ? { tags } : {}),
  };
}
