import { unsafeHeaderText } from './header-rules';
import { EngineError, MiniJinjaSandbox } from './template-engine';

/**
 * Jinja-style templating of subject, text, HTML and AMP (platform notes 3.8) with MiniJinja.
 *
 * Behaviour (Jinja2's and MiniJinja's defaults unless said otherwise):
 * - A missing variable renders empty, is false in `if` and iterates nothing; `default("Friend")`
 *   replaces it. An attribute of a missing variable (`{{ user.name }}` without `user`) is an
 *   error, as in Jinja2. `null` renders as `none`.
 * - HTML and AMP are autoescaped; subject and text are not. A value is never rendered again:
 *   `{{ x }}` inside a substitution stays literal text.
 * - The final newline is kept (unlike Jinja's default), so content reads the same whether or not
 *   it is rendered. Jinja2 methods (`d.items()`, `s.upper()`) work (MiniJinja's pycompat).
 * - No template can load another (there is no loader: include, import and extends are refused)
 *   or reach the host: values are copied into the WASM engine, which has no file, network or
 *   JavaScript access.
 * - Limits: see {@link TEMPLATE_LIMITS}. Any error or limit is a {@link TemplateRenderError}
 *   naming the field.
 */

export const TEMPLATE_LIMITS = {
  /** Largest template and largest rendered field, in characters. */
  maxChars: 10 * 1024 * 1024,
  /** MiniJinja instructions per field. */
  fuel: 250_000,
  /** Wall-clock time for one message's fields (the batch gets this per message). */
  timeoutMs: 250,
  /** WASM memory of the engine; above it a render fails instead of growing the process. */
  memoryBytes: 128 * 1024 * 1024,
  /** The engine is rebuilt after a render leaves its memory above this. */
  resetAboveBytes: 32 * 1024 * 1024,
} as const;

export type TemplateField = 'subject' | 'text_content' | 'html_content' | 'amp_content';

export class TemplateRenderError extends Error {
  override readonly name = 'TemplateRenderError';

  constructor(
    readonly field: TemplateField,
    message: string,
    /** With {@link renderTemplatesBatch}: the index of the substitutions that failed. */
    readonly index?: number,
  ) {
    super(message);
  }
}

export interface MessageTemplates {
  subject: string;
  text?: string;
  html?: string;
  amp?: string;
}

export interface RenderOptions {
  /**
   * Render even without substitutions. Useful when a request has substitutions for some
   * recipients only, so that the others do not receive raw `{{ … }}`.
   */
  always?: boolean;
}

const FIELDS = [
  ['subject', 'subject', false],
  ['text', 'text_content', false],
  ['html', 'html_content', true],
  ['amp', 'amp_content', true],
] as const;

const LOADS_TEMPLATE = /\{%[-+~]?\s*(?:include|import|from|extends)\b/;
const HAS_SYNTAX = /\{[{%#]/;

let sandbox: MiniJinjaSandbox | undefined;

/** Global substitutions first, the recipient's override them (top-level keys); `{}` when neither. */
export function mergeSubstitutions(
  global: Record<string, unknown> | undefined,
  recipient: Record<string, unknown> | undefined,
): Record<string, unknown> {
  // fromEntries defines own properties: a "__proto__" key stays a key.
  return Object.fromEntries([...Object.entries(global ?? {}), ...Object.entries(recipient ?? {})]);
}

/**
 * Renders one message's templates. Without substitutions (undefined or `{}`) the content is not
 * a template (platform notes 3.8) and `templates` is returned as is.
 */
export function renderTemplates(
  templates: MessageTemplates,
  substitutions: Record<string, unknown> | undefined,
  options?: RenderOptions,
): MessageTemplates {
  if (!options?.always && isEmpty(substitutions)) return templates;
  const [rendered] = renderMany(templates, [substitutions ?? {}]);
  if (!rendered) throw new Error('template rendering produced no result');
  return rendered;
}

/**
 * Renders the same templates once per substitutions (one per recipient) in one guarded run:
 * cheaper than calling {@link renderTemplates} per recipient (the time guard starts a thread per
 * run). Entries that are undefined or `{}` come back unchanged unless `always` is set.
 */
export function renderTemplatesBatch(
  templates: MessageTemplates,
  substitutionsList: (Record<string, unknown> | undefined)[],
  options?: RenderOptions,
): MessageTemplates[] {
  const rendered = new Array<MessageTemplates>(substitutionsList.length);
  const contexts: Record<string, unknown>[] = [];
  const positions: number[] = [];
  substitutionsList.forEach((substitutions, i) => {
    if (!options?.always && isEmpty(substitutions)) {
      rendered[i] = templates;
    } else {
      contexts.push(substitutions ?? {});
      positions.push(i);
    }
  });
  if (contexts.length) {
    try {
      renderMany(templates, contexts).forEach((result, j) => {
        rendered[positions[j] ?? j] = result;
      });
    } catch (error) {
      if (error instanceof TemplateRenderError && error.index !== undefined) {
        throw new TemplateRenderError(error.field, error.message, positions[error.index]);
      }
      throw error;
    }
  }
  return rendered;
}

function isEmpty(substitutions: Record<string, unknown> | undefined): boolean {
  return !substitutions || Object.keys(substitutions).length === 0;
}

function renderMany(
  templates: MessageTemplates,
  contexts: Record<string, unknown>[],
): MessageTemplates[] {
  for (const [key, field] of FIELDS) {
    const source = templates[key];
    if (source === undefined) continue;
    if (source.length > TEMPLATE_LIMITS.maxChars) {
      throw new TemplateRenderError(field, `${field} is larger than the 10 MiB template limit`);
    }
    if (LOADS_TEMPLATE.test(source)) {
      throw new TemplateRenderError(
        field,
        `${field}: include, import, from and extends are not available (templates cannot load other templates)`,
      );
    }
  }
  const engine = (sandbox ??= new MiniJinjaSandbox(TEMPLATE_LIMITS));
  const at: { field: TemplateField; index: number } = { field: 'subject', index: 0 };
  try {
    return engine.guarded(
      () =>
        contexts.map((context, index) => {
          at.index = index;
          const rendered: MessageTemplates = { ...templates };
          for (const [key, field, html] of FIELDS) {
            const source = templates[key];
            if (source === undefined) continue;
            at.field = field;
            // Without any {{ }}, {% %} or {# #} a template renders as itself.
            const output = HAS_SYNTAX.test(source) ? engine.render(source, html, context) : source;
            checkOutput(field, output, index);
            rendered[key] = output;
          }
          return rendered;
        }),
      TEMPLATE_LIMITS.timeoutMs * contexts.length,
    );
  } catch (error) {
    if (error instanceof EngineError) {
      throw new TemplateRenderError(at.field, `${at.field}: ${error.message}`, at.index);
    }
    throw error;
  }
}

function checkOutput(field: TemplateField, output: string, index: number): void {
  if (output.length > TEMPLATE_LIMITS.maxChars) {
    throw new TemplateRenderError(field, `the rendered ${field} is larger than 10 MiB`, index);
  }
  if (field === 'subject') {
    const problem = unsafeHeaderText(output);
    if (problem) throw new TemplateRenderError(field, `the rendered subject ${problem}`, index);
  }
}
