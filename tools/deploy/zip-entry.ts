import { readFileSync } from 'node:fs';
import { crc32, inflateRawSync } from 'node:zlib';

/** End of central directory record: signature and fixed size (APPNOTE.TXT 4.3.16). */
const END_SIGNATURE = 0x06054b50;
const END_SIZE = 22;
/** The end record may be followed by a comment of up to 65535 bytes. */
const MAX_COMMENT = 0xffff;
const CENTRAL_SIGNATURE = 0x02014b50;
const CENTRAL_SIZE = 46;
const LOCAL_SIGNATURE = 0x04034b50;
const LOCAL_SIZE = 30;
const STORED = 0;
const DEFLATED = 8;
/** A 32-bit field holding this means the real value is in a zip64 record. */
const ZIP64_MARKER = 0xffffffff;

interface CentralEntry {
  name: string;
  method: number;
  crc: number;
  compressedSize: number;
  size: number;
  localHeaderOffset: number;
}

/**
 * The contents of one file of a zip archive, read with Node's zlib (no `unzip` command). Sizes and
 * checksum come from the central directory, so entries written with a data descriptor (sizes
 * after the data) read the same. Stored and deflated entries; not zip64 (archives over 4 GiB).
 */
export function readZipEntry(archive: string, entryName: string): Buffer {
  const zip = readFileSync(archive);
  const entry = centralEntries(zip, archive).find((candidate) => candidate.name === entryName);
  if (!entry) throw new Error(`${archive} has no entry ${entryName}`);
  if (entry.localHeaderOffset + LOCAL_SIZE > zip.length) {
    throw new Error(`${archive}: ${entryName}'s local header lies outside the archive`);
  }
  if (zip.readUInt32LE(entry.localHeaderOffset) !== LOCAL_SIGNATURE) {
    throw new Error(`${archive}: no local header for ${entryName}`);
  }
  const dataStart =
    entry.localHeaderOffset +
    LOCAL_SIZE +
    zip.readUInt16LE(entry.localHeaderOffset + 26) +
    zip.readUInt16LE(entry.localHeaderOffset + 28);
  const compressed = zip.subarray(dataStart, dataStart + entry.compressedSize);
  if (compressed.length !== entry.compressedSize) {
    throw new Error(`${archive}: ${entryName} is truncated`);
  }
  const data = contents(entry, compressed, archive);
  if (data.length !== entry.size || crc32(data) !== entry.crc) {
    throw new Error(`${archive}: ${entryName} is corrupt (size or CRC-32 differs)`);
  }
  return data;
}

function contents(entry: CentralEntry, compressed: Buffer, archive: string): Buffer {
  if (entry.method === STORED) return Buffer.from(compressed);
  if (entry.method === DEFLATED) return inflateRawSync(compressed);
  throw new Error(`${archive}: ${entry.name} uses compression method ${entry.method}`);
}

function centralEntries(zip: Buffer, archive: string): CentralEntry[] {
  const end = endRecordOffset(zip, archive);
  const count = zip.readUInt16LE(end + 10);
  let offset = zip.readUInt32LE(end + 16);
  if (offset === ZIP64_MARKER) throw new Error(`${archive} is a zip64 archive (unsupported)`);
  const entries: CentralEntry[] = [];
  for (let index = 0; index < count; index++) {
    if (offset + CENTRAL_SIZE > zip.length || zip.readUInt32LE(offset) !== CENTRAL_SIGNATURE) {
      throw new Error(`${archive}: central directory entry ${index} is damaged`);
    }
    const nameLength = zip.readUInt16LE(offset + 28);
    const entry: CentralEntry = {
      method: zip.readUInt16LE(offset + 10),
      crc: zip.readUInt32LE(offset + 16),
      compressedSize: zip.readUInt32LE(offset + 20),
      size: zip.readUInt32LE(offset + 24),
      localHeaderOffset: zip.readUInt32LE(offset + 42),
      name: zip.toString('utf8', offset + CENTRAL_SIZE, offset + CENTRAL_SIZE + nameLength),
    };
    if ([entry.compressedSize, entry.size, entry.localHeaderOffset].includes(ZIP64_MARKER)) {
      throw new Error(`${archive}: ${entry.name} is a zip64 entry (unsupported)`);
    }
    entries.push(entry);
    offset +=
      CENTRAL_SIZE + nameLength + zip.readUInt16LE(offset + 30) + zip.readUInt16LE(offset + 32);
  }
  return entries;
}

/** The end record, searched backwards past a possible archive comment. */
function endRecordOffset(zip: Buffer, archive: string): number {
  const lowest = Math.max(0, zip.length - END_SIZE - MAX_COMMENT);
  for (let offset = zip.length - END_SIZE; offset >= lowest; offset--) {
    if (zip.readUInt32LE(offset) === END_SIGNATURE) return offset;
  }
  throw new Error(`${archive} is not a zip archive (no end of central directory record)`);
}
