import { randomBytes, randomUUID } from 'node:crypto';

import { CommonErrorCode } from '@envoi/contracts-core';
import {
  INLINE_PAYLOAD_MAX_BYTES,
  MESSAGE_DOWNLOADS_BUCKET,
  MESSAGE_MAX_BYTES,
  MESSAGE_UPLOADS_BUCKET,
  type MessageRecord,
  MessagesErrorCode,
  MessagesSubjects,
  SEND_MAX_BYTES,
} from '@envoi/contracts-messages';
import { putUpload, takeUpload } from '@envoi/shared-nats';

import { messageBody, type MessagesTestApp, newSender, uuidOf } from '../messages-test-app';
import { getMessage, storedRaw } from './accept.suite';

const TTL_MS = 600_000;

export function uploadSuite(getApp: () => MessagesTestApp): void {
  describe('messages service: large bodies through the object store', () => {
    let app: MessagesTestApp;

    beforeAll(() => {
      app = getApp();
    });

    async function upload(body: unknown) {
      const bytes = Buffer.from(JSON.stringify(body), 'utf8');
      return putUpload(app.connection, MESSAGE_UPLOADS_BUCKET, randomUUID(), bytes, TTL_MS);
    }

    it('accepts a 2 MB body from an upload, deletes the upload, and hands the content back the same way', async () => {
      const sender = await newSender(app);
      const attachment = randomBytes(1_500_000).toString('base64');
      const body = messageBody(sender, {
        subject: 'Big one',
        attachments: [
          {
            file_name: 'big.bin',
            content_type: 'application/octet-stream',
            data: attachment,
            base64: true,
          },
        ],
      });
      const ref = await upload(body);
      expect(ref.size).toBeGreaterThan(2_000_000);

      const result = await app.rpc.request(MessagesSubjects.createMessage, {
        account_id: sender.accountId,
        api: 'v2',
        upload: ref,
      });

      expect(result.data[0]).toMatchObject({ status: 'queued' });
      const id = uuidOf(result.data[0]?.id ?? null);
      expect((await storedRaw(app, id))?.length).toBeGreaterThan(2_000_000);
      const store = await app.connection.jetstream().views.os(MESSAGE_UPLOADS_BUCKET);
      const left = await store.info(ref.name);
      expect(left === null || left.deleted).toBe(true);

      // Too large for a reply: the content comes through the downloads bucket.
      const record = await getMessage(app, sender.accountId, id);
      expect(record).toMatchObject({ subject: 'Big one', content: null, content_parsed: null });
      const download = record.content_download;
      expect(download).toMatchObject({ bucket: MESSAGE_DOWNLOADS_BUCKET });
      if (!download) return;
      expect(download.size).toBeGreaterThan(INLINE_PAYLOAD_MAX_BYTES);
      const full = JSON.parse(
        (await takeUpload(app.connection, download)).toString('utf8'),
      ) as Pick<MessageRecord, 'content' | 'content_parsed'>;
      expect(full.content).toContain('Subject: Big one');
      expect(full.content_parsed?.attachments[0]).toMatchObject({
        filename: 'big.bin',
        content: attachment,
      });
    });

    /** How many messages the account has stored. */
    async function storedCount(accountId: string): Promise<number> {
      const rows = await app.dataSource.query<Array<{ count: string }>>(
        'SELECT count(*) AS count FROM messages.messages WHERE account_id = $1',
        [accountId],
      );
      return Number(rows[0]?.count ?? 0);
    }

    function attachment(bytes: number) {
      return {
        file_name: 'big.bin',
        content_type: 'application/octet-stream',
        data: randomBytes(bytes).toString('base64'),
        base64: true,
      };
    }

    it('refuses a message over the maximum size once encoded, and stores nothing', async () => {
      const sender = await newSender(app);
      // Base64 with line breaks: about 1.37 times the bytes, so well over the limit.
      const ref = await upload(
        messageBody(sender, { attachments: [attachment(Math.ceil(MESSAGE_MAX_BYTES * 0.8))] }),
      );

      await expect(
        app.rpc.request(MessagesSubjects.createMessage, {
          account_id: sender.accountId,
          api: 'v2',
          upload: ref,
        }),
      ).rejects.toMatchObject({
        code: MessagesErrorCode.InvalidMessage,
        message: expect.stringMatching(
          `^the message to to-.*@recipient\\.test is [0-9]+ bytes once encoded; at most ${MESSAGE_MAX_BYTES} bytes are accepted$`,
        ) as unknown,
      });
      expect(await storedCount(sender.accountId)).toBe(0);
    });

    it('refuses a send whose messages together exceed the request maximum, and stores nothing', async () => {
      const sender = await newSender(app);
      const recipients = Array.from({ length: 100 }, (_, index) => ({
        email: `many-${index}@recipient.test`,
      }));
      // Each message is small enough on its own; 100 of them are not, together.
      const each = Math.ceil(SEND_MAX_BYTES / 100 / 1.3);
      const ref = await upload(
        messageBody(sender, { recipients, attachments: [attachment(each)] }),
      );

      await expect(
        app.rpc.request(MessagesSubjects.createMessage, {
          account_id: sender.accountId,
          api: 'v2',
          upload: ref,
        }),
      ).rejects.toMatchObject({
        code: MessagesErrorCode.InvalidMessage,
        message: `the messages of this request come to more than ${SEND_MAX_BYTES} bytes once encoded; send them in several requests with fewer recipients`,
      });
      expect(await storedCount(sender.accountId)).toBe(0);
    });

    it('refuses an upload that is missing or not what its reference says', async () => {
      const sender = await newSender(app);
      const ref = await upload(messageBody(sender));
      const request = (upload: typeof ref) =>
        app.rpc.request(MessagesSubjects.createMessage, {
          account_id: sender.accountId,
          api: 'v2',
          upload,
        });

      await expect(request({ ...ref, sha256: '0'.repeat(64) })).rejects.toMatchObject({
        code: MessagesErrorCode.UploadUnavailable,
      });
      await expect(request({ ...ref, size: ref.size + 1 })).rejects.toMatchObject({
        code: MessagesErrorCode.UploadUnavailable,
      });
      await expect(request(ref)).resolves.toMatchObject({ data: [{ status: 'queued' }] });
      // Taken once: a replay of the same reference finds nothing.
      await expect(request(ref)).rejects.toMatchObject({
        code: MessagesErrorCode.UploadUnavailable,
      });
      await expect(request({ ...ref, bucket: 'no-such-bucket', name: 'x' })).rejects.toMatchObject({
        code: MessagesErrorCode.UploadUnavailable,
      });
    });

    it('validates an uploaded body like an inline one', async () => {
      const sender = await newSender(app);
      const ref = await upload({ ...messageBody(sender), retention: { metadata: 31 } });

      await expect(
        app.rpc.request(MessagesSubjects.createMessage, {
          account_id: sender.accountId,
          api: 'v2',
          upload: ref,
        }),
      ).rejects.toMatchObject({
        code: MessagesErrorCode.InvalidMessage,
        message: 'retention.metadata must not be greater than 30',
      });
      await expect(
        app.rpc.request(MessagesSubjects.createMessage, {
          account_id: sender.accountId,
          api: 'v2',
          body: messageBody(sender),
          upload: ref,
        }),
      ).rejects.toMatchObject({ code: MessagesErrorCode.InvalidMessage });
      await expect(
        app.rpc.request(MessagesSubjects.createMessage, {
          account_id: sender.accountId,
          api: 'v2',
        }),
      ).rejects.toMatchObject({
        code: expect.stringMatching(
          `^(${MessagesErrorCode.InvalidMessage}|${CommonErrorCode.ValidationFailed})$`,
        ) as unknown,
      });
    });
  });
}
