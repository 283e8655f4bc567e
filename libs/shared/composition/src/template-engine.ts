import { randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import util from 'node:util';
import { compileFunction, createContext, Script } from 'node:vm';

import type { Environment } from 'minijinja-js';

/**
 * MiniJinja (minijinja-js, WASM) run as a sandbox with limits the engine alone does not give.
 *
 * - Fuel bounds the number of instructions, not their cost: one `range(100000)|join` or
 *   `"x" * 50000000` is one instruction. A wall-clock limit therefore guards every render
 *   (`vm` timeouts interrupt WebAssembly too).
 * - The WASM memory has no maximum, so a doubling loop grows it to 4 GiB. This module gives the
 *   module a maximum by patching the memory section of its binary: an allocation above it
 *   aborts the engine instead of the process.
 * - An abort (trap) or an interrupted render leaves the WASM instance unusable ("recursive use
 *   of an object", and a possibly broken allocator): the package's own README warns that a
 *   panic corrupts the runtime. The package's single module-level instance cannot be replaced,
 *   so this module evaluates the package's Node glue itself, once per instance, and starts a
 *   fresh instance after any abort, timeout or memory growth above `resetAboveBytes`.
 */

export interface EngineLimits {
  /** Instructions per render. */
  fuel: number;
  /** Maximum size of the WASM memory. */
  memoryBytes: number;
  /** A fresh instance replaces one whose memory grew above this (memory never shrinks). */
  resetAboveBytes: number;
}

/** A template error or a limit, with the engine's message cleaned for a 400 response. */
export class EngineError extends Error {
  override readonly name = 'EngineError';
}

type Glue = typeof import('minijinja-js') & { __wasm: { memory: { buffer: ArrayBuffer } } };
type GlueFactory = (
  exports: object,
  require: (id: string) => unknown,
  module: { exports: object },
  filename: string,
  dirname: string,
  console: { error: (message: unknown) => void },
) => void;

const GLUE_PATH = require.resolve('minijinja-js');
const WASM_PAGE = 64 * 1024;
/** Templates larger than this are parsed for each render rather than kept parsed. */
const CACHE_MAX_SOURCE_CHARS = 512 * 1024;
const CACHE_MAX_CHARS = 4 * 1024 * 1024;
const CACHE_MAX_ENTRIES = 64;

let glueFactory: GlueFactory | undefined;
const patchedBinaries = new Map<number, Buffer>();

export class MiniJinjaSandbox {
  private glue: Glue | undefined;
  private env: Environment | undefined;
  /** Parsed templates by source, per escaping mode, oldest first (an LRU). */
  private readonly cache = { html: new Map<string, string>(), text: new Map<string, string>() };
  private cachedChars = 0;
  private lastPanic: string | undefined;
  private readonly guardContext = createContext({ job: undefined });
  private readonly guardScript = new Script('job()', { filename: 'envoi-template-guard.js' });

  constructor(private readonly limits: EngineLimits) {}

  /**
   * Runs `job` (synchronously) with a wall-clock limit. When the limit cuts a render short the
   * engine is rebuilt and an {@link EngineError} is thrown; errors of `job` pass through.
   */
  guarded<T>(job: () => T, timeoutMs: number): T {
    let result: { value: T } | undefined;
    this.guardContext['job'] = () => {
      result = { value: job() };
    };
    try {
      this.guardScript.runInContext(this.guardContext, { timeout: Math.max(1, timeoutMs) });
    } catch (error) {
      if ((error as { code?: unknown } | null)?.code === 'ERR_SCRIPT_EXECUTION_TIMEOUT') {
        this.reset();
        throw new EngineError(`template rendering took longer than ${timeoutMs} ms`);
      }
      throw error;
    } finally {
      this.guardContext['job'] = undefined;
      if (this.glue && this.glue.__wasm.memory.buffer.byteLength > this.limits.resetAboveBytes) {
        this.reset();
      }
    }
    if (!result) throw new Error('template guard returned without running the job');
    return result.value;
  }

  /** Renders `source` with HTML autoescaping or none. Throws {@link EngineError}. */
  render(source: string, html: boolean, context: Record<string, unknown>): string {
    const env = this.environment();
    try {
      if (source.length > CACHE_MAX_SOURCE_CHARS) {
        return env.renderNamedStr(html ? 'template.html' : 'template.txt', source, context);
      }
      return env.renderTemplate(this.parsed(env, source, html), context);
    } catch (error) {
      throw this.engineError(error);
    }
  }

  /** Drops the instance: the next render starts a fresh one. */
  reset(): void {
    try {
      // Unregisters the finalizer first, so a broken instance is never called from a GC callback.
      this.env?.free();
    } catch {
      // a broken instance cannot free: it is dropped whole
    }
    this.env = undefined;
    this.glue = undefined;
    this.cache.html.clear();
    this.cache.text.clear();
    this.cachedChars = 0;
  }

  /** The WASM memory in use now (for tests and metrics). */
  memoryBytes(): number {
    return this.glue?.__wasm.memory.buffer.byteLength ?? 0;
  }

  private environment(): Environment {
    if (this.env) return this.env;
    this.lastPanic = undefined;
    this.glue = loadGlue(this.limits.memoryBytes, (message) => {
      this.lastPanic = String(message).split('\n')[0]?.slice(0, 200);
    });
    const env = new this.glue.Environment();
    env.debug = false;
    // Jinja's own default: a missing variable renders empty, is false and iterates nothing;
    // an attribute of a missing variable is an error.
    env.undefinedBehavior = 'lenient';
    // Content keeps its final newline whether or not it is rendered as a template.
    env.keepTrailingNewline = true;
    // Jinja2 methods such as `d.items()` and `s.upper()`: pure functions of the value.
    env.enablePyCompat();
    // debug() prints the environment, template names included.
    env.removeGlobal('debug');
    env.fuel = this.limits.fuel;
    this.env = env;
    return env;
  }

  /** The name of the parsed template for `source`, parsing it on first use. */
  private parsed(env: Environment, source: string, html: boolean): string {
    const cache = html ? this.cache.html : this.cache.text;
    const known = cache.get(source);
    if (known !== undefined) {
      cache.delete(source);
      cache.set(source, known);
      return known;
    }
    // Unguessable names: nothing registered can be reached by {% include %} from another
    // account's template (and debug(), which would list them, is removed).
    const name = `${randomUUID()}.${html ? 'html' : 'txt'}`;
    env.addTemplate(name, source);
    cache.set(source, name);
    this.cachedChars += source.length;
    while (this.cachedChars > CACHE_MAX_CHARS || this.cacheSize() > CACHE_MAX_ENTRIES) {
      this.evictOldest(env);
    }
    return name;
  }

  private cacheSize(): number {
    return this.cache.html.size + this.cache.text.size;
  }

  private evictOldest(env: Environment): void {
    const map = this.cache.text.size > this.cache.html.size ? this.cache.text : this.cache.html;
    const oldest = map.entries().next();
    if (oldest.done) return;
    const [source, name] = oldest.value;
    map.delete(source);
    this.cachedChars -= source.length;
    env.removeTemplate(name);
  }

  private engineError(error: unknown): EngineError {
    // The glue runs in the main realm (under jest another one than this module's): no instanceof.
    const name = (error as { name?: unknown } | null)?.name;
    const message = String((error as { message?: unknown } | null)?.message ?? error);
    const broken =
      name === 'RuntimeError' ||
      /recursive use of an object|attempted to take ownership/.test(message);
    if (broken) {
      const panic = this.lastPanic;
      this.reset();
      const limit = Math.round(this.limits.memoryBytes / (1024 * 1024));
      return new EngineError(
        panic
          ? `the template engine aborted: ${panic}`
          : `template rendering exceeded the ${limit} MiB memory limit`,
      );
    }
    return new EngineError(cleanMessage(message));
  }
}

/** The first line of a MiniJinja error, with the internal template name replaced by the line. */
function cleanMessage(message: string): string {
  const first = message.split('\n')[0] ?? message;
  return first.replace(/ \(in [^()]*?:(\d+)\)$/, ' (line $1)');
}

/** A fresh instance of minijinja-js's Node glue and WASM module, memory capped. */
function loadGlue(memoryBytes: number, onPanic: (message: unknown) => void): Glue {
  glueFactory ??= compileFunction(
    readFileSync(GLUE_PATH, 'utf8'),
    ['exports', 'require', 'module', '__filename', '__dirname', 'console'],
    { filename: GLUE_PATH },
  ) as unknown as GlueFactory;
  const maxPages = Math.floor(memoryBytes / WASM_PAGE);
  let binary = patchedBinaries.get(maxPages);
  if (!binary) {
    binary = capMemory(
      readFileSync(path.join(path.dirname(GLUE_PATH), 'minijinja_js_bg.wasm')),
      maxPages,
    );
    patchedBinaries.set(maxPages, binary);
  }
  const wasm = binary;
  // The glue reads its binary with fs.readFileSync and needs path and util; nothing else.
  const shim = (id: string): unknown => {
    switch (id) {
      case 'fs':
        return { readFileSync: () => wasm };
      case 'path':
        return path;
      case 'util':
        return util;
      default:
        throw new Error(`minijinja-js glue asked for module ${id}`);
    }
  };
  const module = { exports: {} };
  glueFactory(module.exports, shim, module, GLUE_PATH, path.dirname(GLUE_PATH), { error: onPanic });
  return module.exports as Glue;
}

/**
 * Sets the maximum of the module's (single, defined) memory to `maxPages`: the memory section
 * (id 5) is rewritten, every other byte is kept.
 */
export function capMemory(binary: Buffer, maxPages: number): Buffer {
  let at = 8; // magic and version
  while (at < binary.length) {
    const id = binary[at] ?? 0;
    const [size, contentStart] = readLeb(binary, at + 1);
    if (id === 5) {
      const [count, limitsAt] = readLeb(binary, contentStart);
      if (count !== 1) throw new Error(`expected one WASM memory, found ${count}`);
      const flags = binary[limitsAt];
      if (flags !== 0x00 && flags !== 0x01)
        throw new Error(`unexpected WASM memory flags ${flags}`);
      const [min] = readLeb(binary, limitsAt + 1);
      if (min > maxPages) throw new Error(`WASM memory needs ${min} pages, more than the cap`);
      const content = Buffer.from([...writeLeb(1), 0x01, ...writeLeb(min), ...writeLeb(maxPages)]);
      return Buffer.concat([
        binary.subarray(0, at),
        Buffer.from([5, ...writeLeb(content.length)]),
        content,
        binary.subarray(contentStart + size),
      ]);
    }
    at = contentStart + size;
  }
  throw new Error('WASM binary has no memory section to cap');
}

function readLeb(bytes: Buffer, start: number): [value: number, next: number] {
  let value = 0;
  let scale = 1;
  let at = start;
  for (;;) {
    const byte = bytes[at++];
    if (byte === undefined) throw new Error('truncated WASM binary');
    value += (byte & 0x7f) * scale;
    scale *= 128;
    if (!(byte & 0x80)) return [value, at];
  }
}

function writeLeb(value: number): number[] {
  const out: number[] = [];
  let rest = value;
  do {
    let byte = rest & 0x7f;
    rest = Math.floor(rest / 128);
    if (rest) byte |= 0x80;
    out.push(byte);
  } while (rest);
  return out;
}
