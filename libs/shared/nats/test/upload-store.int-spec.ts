import { randomBytes } from 'node:crypto';

import { connect, type NatsConnection } from 'nats';

import { putNewUpload, putUpload, readUpload, UploadUnavailableError } from '../src/upload-store';

const SIZES: Array<[string, number]> = [
  ['an empty upload', 0],
  ['an upload of one chunk', 1_200],
  ['an upload of several chunks', 300 * 1024 + 7],
];

describe('upload store (real nats-server with JetStream)', () => {
  let connection: NatsConnection;
  const bucket = `test-uploads-${randomBytes(4).toString('hex')}`;

  beforeAll(async () => {
    connection = await connect({ servers: (process.env['NATS_URL'] ?? '').split(',') });
  });

  afterAll(async () => {
    const jsm = await connection.jetstreamManager();
    await jsm.streams.delete(`OBJ_${bucket}`).catch(() => false);
    await connection.drain();
  });

  it.each(SIZES)('reads back %s byte for byte', async (_what, size) => {
    const bytes = randomBytes(size);
    const ref = await putUpload(connection, bucket, `object-${size}`, bytes, 60_000);
    await expect(readUpload(connection, ref)).resolves.toEqual(bytes);
  });

  it.each(SIZES)(
    'reads back %s stored as a new object, as the object store does',
    async (_what, size) => {
      const bytes = randomBytes(size);
      const name = `new-object-${size}`;
      const ref = await putNewUpload(connection, bucket, name, bytes, 60_000);

      await expect(readUpload(connection, ref)).resolves.toEqual(bytes);
      const store = await connection.jetstream().views.os(bucket);
      const info = await store.info(name);
      expect(info).toMatchObject({ name, size, deleted: false });
      // getBlob checks the digest the metadata gives.
      await expect(store.getBlob(name)).resolves.toEqual(new Uint8Array(bytes));
    },
  );

  it('refuses an upload that is missing or differs from its reference', async () => {
    const ref = await putUpload(connection, bucket, 'replaced', randomBytes(100), 60_000);
    await putUpload(connection, bucket, 'replaced', randomBytes(100), 60_000);
    await expect(readUpload(connection, ref)).rejects.toBeInstanceOf(UploadUnavailableError);
    await expect(readUpload(connection, { ...ref, name: 'never-written' })).rejects.toThrow(
      'is missing',
    );
  });
});
