import { createHash } from 'node:crypto';

import {
  headers,
  JsHeaders,
  nanos,
  type NatsConnection,
  NatsError,
  nuid,
  type ObjectStore,
  StorageType,
} from 'nats';

/**
 * Where an uploaded payload lives and what it must be: a body too large for a NATS message
 * travels through a JetStream object store bucket, and the reader checks it byte for byte.
 * Structurally the same as the contracts' UploadRef.
 */
export interface UploadObjectRef {
  bucket: string;
  name: string;
  /** Bytes. */
  size: number;
  /** SHA-256 of the bytes, lowercase hex. */
  sha256: string;
}

/** The referenced upload is gone (taken, expired, never written) or is not what the ref says. */
export class UploadUnavailableError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'UploadUnavailableError';
  }
}

const STREAM_NOT_FOUND = 10059;
const NO_MESSAGE_FOUND = 10037;

/** Object store handles per connection, so that a put or take costs no stream lookup. */
const handles = new WeakMap<NatsConnection, Map<string, Promise<ObjectStore>>>();

function cached(
  connection: NatsConnection,
  bucket: string,
  open: () => Promise<ObjectStore>,
): Promise<ObjectStore> {
  let perConnection = handles.get(connection);
  if (!perConnection) {
    perConnection = new Map();
    handles.set(connection, perConnection);
  }
  let handle = perConnection.get(bucket);
  if (!handle) {
    handle = open();
    perConnection.set(bucket, handle);
    // A failed open is not remembered: the next call tries again.
    handle.catch(() => perConnection.delete(bucket));
  }
  return handle;
}

function sha256Hex(bytes: Uint8Array): string {
  return createHash('sha256').update(bytes).digest('hex');
}

/**
 * Opens the bucket, creating it (file storage, objects expire after `ttlMs`) when it is missing.
 * An existing bucket keeps its own TTL. Safe to call from every replica at startup.
 */
export function ensureUploadBucket(
  connection: NatsConnection,
  bucket: string,
  ttlMs: number,
): Promise<ObjectStore> {
  return cached(connection, bucket, () =>
    connection.jetstream().views.os(bucket, { ttl: nanos(ttlMs), storage: StorageType.File }),
  );
}

/**
 * Stores `bytes` as object `name` of `bucket` (created with `ttlMs` if missing; a previous object
 * of that name is replaced) and returns the reference the reader needs.
 */
export async function putUpload(
  connection: NatsConnection,
  bucket: string,
  name: string,
  bytes: Uint8Array,
  ttlMs: number,
): Promise<UploadObjectRef> {
  const store = await ensureUploadBucket(connection, bucket, ttlMs);
  await store.putBlob({ name }, bytes);
  return { bucket, name, size: bytes.length, sha256: sha256Hex(bytes) };
}

/** The object store's encoding of names in subjects and of digests: base64url, padded. */
function base64UrlPadded(bytes: Buffer): string {
  return bytes.toString('base64').replace(/\+/g, '-').replace(/\//g, '_');
}

/** The object store's largest chunk (its default), at most the server's largest message. */
const MAX_CHUNK_BYTES = 128 * 1024;
const encoder = new TextEncoder();

/**
 * Stores `bytes` as a new object `name` of `bucket` (created with `ttlMs` if missing), for a name
 * that was never used (a fresh uuid): unlike putUpload, no lookup of an earlier version to
 * replace, and the chunks and the metadata are published together, one round trip in all. The
 * layout is the object store's own (`$O.<bucket>.C.<nuid>` chunks, then the `$O.<bucket>.M.<name>`
 * metadata that makes the object visible), so that readUpload and the object store read it.
 * Resolves once JetStream acknowledged every message; when any failed, the reference was never
 * handed out and the bucket's TTL removes what was stored.
 */
export async function putNewUpload(
  connection: NatsConnection,
  bucket: string,
  name: string,
  bytes: Uint8Array,
  ttlMs: number,
): Promise<UploadObjectRef> {
  await ensureUploadBucket(connection, bucket, ttlMs);
  const js = connection.jetstream();
  const chunkBytes = Math.min(MAX_CHUNK_BYTES, connection.info?.max_payload ?? MAX_CHUNK_BYTES);
  const objectId = nuid.next();
  const publications: Array<Promise<unknown>> = [];
  for (let offset = 0; offset < bytes.length; offset += chunkBytes) {
    const chunk = bytes.subarray(offset, offset + chunkBytes);
    publications.push(js.publish(`$O.${bucket}.C.${objectId}`, chunk));
  }
  const digest = createHash('sha256').update(bytes).digest();
  const metadata = {
    name,
    description: '',
    options: { max_chunk_size: chunkBytes },
    bucket,
    nuid: objectId,
    size: bytes.length,
    chunks: publications.length,
    mtime: new Date().toISOString(),
    digest: `SHA-256=${base64UrlPadded(digest)}`,
    deleted: false,
  };
  const rollup = headers();
  rollup.set(JsHeaders.RollupHdr, JsHeaders.RollupValueSubject);
  const metaSubject = `$O.${bucket}.M.${base64UrlPadded(Buffer.from(name))}`;
  publications.push(
    js.publish(metaSubject, encoder.encode(JSON.stringify(metadata)), { headers: rollup }),
  );
  await Promise.all(publications);
  return { bucket, name, size: bytes.length, sha256: digest.toString('hex') };
}

/** The bucket when it exists; never creates one (a reader has no TTL to give it). */
function existingBucket(connection: NatsConnection, bucket: string): Promise<ObjectStore> {
  return cached(connection, bucket, async () => {
    const jsm = await connection.jetstreamManager();
    try {
      await jsm.streams.info(`OBJ_${bucket}`);
    } catch (error) {
      if (error instanceof NatsError && error.api_error?.err_code === STREAM_NOT_FOUND) {
        throw new UploadUnavailableError(`upload bucket ${bucket} does not exist`);
      }
      throw error;
    }
    return connection.jetstream().views.os(bucket);
  });
}

/**
 * An object's bytes, null when it is missing: one that fits a single chunk (the usual upload)
 * with one stream message get, a larger one through the object store's reader (a consumer).
 */
async function objectBytes(
  connection: NatsConnection,
  store: ObjectStore,
  ref: UploadObjectRef,
): Promise<Uint8Array | null> {
  const info = await store.info(ref.name);
  if (info === null || info.deleted) return null;
  if (info.chunks !== 1 || info.options?.link) return store.getBlob(ref.name);
  const jsm = await connection.jetstreamManager({ checkAPI: false });
  try {
    const chunk = await jsm.streams.getMessage(`OBJ_${ref.bucket}`, {
      last_by_subj: `$O.${ref.bucket}.C.${info.nuid}`,
    });
    return chunk.data;
  } catch (error) {
    if (error instanceof NatsError && error.api_error?.err_code === NO_MESSAGE_FOUND) return null;
    throw error;
  }
}

/**
 * Reads an object, checks its size and SHA-256 against the reference and returns its bytes,
 * leaving it in the bucket (its TTL removes it). Throws UploadUnavailableError when it is
 * missing or differs; bus failures propagate as they are.
 */
export async function readUpload(
  connection: NatsConnection,
  ref: UploadObjectRef,
): Promise<Buffer> {
  const store = await existingBucket(connection, ref.bucket);
  const data = await objectBytes(connection, store, ref);
  if (data === null) {
    throw new UploadUnavailableError(`upload ${ref.name} is missing (expired or already taken)`);
  }
  const bytes = Buffer.from(data.buffer, data.byteOffset, data.byteLength);
  if (bytes.length !== ref.size || sha256Hex(bytes) !== ref.sha256.toLowerCase()) {
    throw new UploadUnavailableError(`upload ${ref.name} does not match its size and digest`);
  }
  return bytes;
}

/**
 * Reads an upload (see readUpload), deletes it and returns its bytes. A missing or different
 * upload is left for the bucket's TTL. A failed delete is not an error: the bytes were read, and
 * the bucket's TTL removes the object.
 */
export async function takeUpload(
  connection: NatsConnection,
  ref: UploadObjectRef,
): Promise<Buffer> {
  const bytes = await readUpload(connection, ref);
  const store = await existingBucket(connection, ref.bucket);
  await store.delete(ref.name).catch(() => undefined);
  return bytes;
}
