import { capMemory, MiniJinjaSandbox } from './template-engine';

/** A module with one exported memory of one page and no maximum. */
const TINY = Buffer.concat([
  Buffer.from('0061736d01000000', 'hex'), // magic, version
  Buffer.from('0503010001', 'hex'), // memory section: one memory, min 1 page, no maximum
  Buffer.from('070a01066d656d6f72790200', 'hex'), // export section: "memory" = memory 0
]);

/** The few WebAssembly JS API members used here (the DOM lib that types them is not loaded). */
interface WasmApi {
  Module: new (binary: Buffer) => object;
  Instance: new (module: object, imports: object) => { exports: Record<string, unknown> };
}
const wasmApi = (globalThis as unknown as { WebAssembly: WasmApi }).WebAssembly;

function memoryOf(binary: Buffer): { grow(pages: number): number } {
  const instance = new wasmApi.Instance(new wasmApi.Module(binary), {});
  return instance.exports['memory'] as { grow(pages: number): number };
}

const limits = { fuel: 100_000, memoryBytes: 64 * 1024 * 1024, resetAboveBytes: 8 * 1024 * 1024 };

describe('capMemory', () => {
  it('gives the memory a maximum and keeps the module valid', () => {
    expect(() => memoryOf(TINY).grow(10)).not.toThrow();
    const capped = memoryOf(capMemory(TINY, 3));
    expect(capped.grow(2)).toBe(1);
    expect(() => capped.grow(1)).toThrow(RangeError);
  });

  it('refuses a binary without a memory, or one whose minimum is above the cap', () => {
    expect(() => capMemory(TINY.subarray(0, 8), 3)).toThrow('no memory section');
    expect(() => capMemory(TINY, 0)).toThrow('more than the cap');
  });
});

describe('MiniJinjaSandbox', () => {
  it('rebuilds the instance after memory grew above resetAboveBytes', () => {
    const sandbox = new MiniJinjaSandbox(limits);
    expect(sandbox.guarded(() => sandbox.render('{{ a }}', false, { a: 1 }), 1000)).toBe('1');
    const small = sandbox.memoryBytes();
    expect(small).toBeGreaterThan(0);
    expect(small).toBeLessThan(limits.resetAboveBytes);
    const out = sandbox.guarded(() => sandbox.render('{{ "x" * 10000000 }}', false, {}), 5000);
    expect(out).toHaveLength(10_000_000);
    expect(sandbox.memoryBytes()).toBe(0); // dropped: the next render starts a fresh instance
    expect(sandbox.guarded(() => sandbox.render('{{ a }}', true, { a: '<' }), 1000)).toBe('&lt;');
  });

  it('replaces an instance the memory cap aborted', () => {
    const sandbox = new MiniJinjaSandbox(limits);
    expect(() => sandbox.render('{{ "x" * 100000000 }}', false, {})).toThrow(
      'template rendering exceeded the 64 MiB memory limit',
    );
    expect(sandbox.render('{{ a }}', false, { a: 'ok' })).toBe('ok');
  });

  it('passes errors of the job through and runs nothing after a timeout', () => {
    const sandbox = new MiniJinjaSandbox(limits);
    expect(() =>
      sandbox.guarded(() => {
        throw new TypeError('mine');
      }, 1000),
    ).toThrow(TypeError);
    expect(() =>
      sandbox.guarded(() => {
        for (;;) sandbox.render('{{ range(100000)|join(",")|length }}', false, {});
      }, 50),
    ).toThrow('template rendering took longer than 50 ms');
    expect(sandbox.render('{{ 2 * 21 }}', false, {})).toBe('42');
  });
});
