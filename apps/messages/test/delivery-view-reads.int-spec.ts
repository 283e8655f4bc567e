import { randomBytes, randomUUID } from 'node:crypto';

import { DataSource } from 'typeorm';

import { messagesDataSourceOptions } from '../src/database/data-source-options';
import { runMessagesMigrations } from '../src/database/run-messages-migrations';
import { toDeliveryView } from '../src/messages/delivery-view.service';
import { type DeliveryMessage, DeliveryViewReads } from '../src/messages/delivery-view-reads';
import { recipientPartOf } from '../src/messages/message-contents.service';
import { MessagesRepository } from '../src/messages/messages.repository';
import {
  type SendAttachmentRow,
  type SendRow,
  SendsRepository,
} from '../src/messages/sends.repository';
import { at, messageRow } from './message-row-factory';

/**
 * The delivery views' prepared reads (delivery-view-reads.ts) against the real messages schema:
 * the same messages and send contents as the TypeORM reads they replace.
 */

function sendRow(id: string, changes: Partial<SendRow> = {}): SendRow {
  return {
    id,
    accountId: '0190aaaa-0000-7000-8000-000000000001',
    kind: 'message',
    api: 'v2',
    acceptedAt: at('2030-01-01T10:00:00.123Z'),
    fromAddress: { email: 'from@example.test', name: 'Shop "A" {1} \\' },
    replyTo: { email: 'reply@example.test' },
    toAddresses: null,
    ccAddresses: null,
    subject: 'Hi {{ name }}, ünïcödé ✉',
    textContent: 'Hello {{ name }}\r\nNULL',
    htmlContent: '<p>Hello {{ name }}</p>',
    ampContent: null,
    headers: { 'X-Zeta': '1', 'X-Alpha': 'a,b "c"' },
    substitutions: { zeta: 1, alpha: [1, 'x'] },
    templated: true,
    rawContent: null,
    messageIdHeader: null,
    purgeAt: at('2030-02-01T00:00:00.500Z'),
    purgedAt: null,
    retainUntil: at('2030-03-01T00:00:00.000Z'),
    ...changes,
  };
}

function attachment(sendId: string, position: number, content: Buffer): SendAttachmentRow {
  return {
    sendId,
    position,
    fileName: `file ${position} été.bin`,
    contentType: 'application/octet-stream',
    contentId: position === 0 ? 'logo@example.test' : null,
    contentDisposition: position === 0 ? 'inline' : null,
    content,
  };
}

describe('delivery view reads (prepared statements)', () => {
  let dataSource: DataSource | undefined;

  const db = (): DataSource => {
    if (!dataSource) throw new Error('no database');
    return dataSource;
  };

  beforeAll(async () => {
    const url = process.env['DATABASE_URL'] ?? '';
    await runMessagesMigrations(url);
    dataSource = new DataSource(messagesDataSourceOptions(url, 2));
    await dataSource.initialize();
  }, 60_000);

  afterAll(async () => {
    await dataSource?.destroy();
  });

  it('reads the messages TypeORM reads, in the order asked, with the views and parts they make', async () => {
    const sendId = randomUUID();
    await db().transaction((manager) =>
      new SendsRepository(db()).insert(sendRow(sendId), [], [], manager),
    );
    const rows = [
      messageRow(randomUUID()),
      messageRow(randomUUID(), {
        sendId,
        kind: 'message',
        status: 'Received',
        recipientName: null,
        substitutions: null,
        sandbox: false,
        sandboxResult: null,
        firstAttemptAt: null,
        expiresAt: null,
        contentPurgedAt: null,
        envelopeRecipients: ['a,b@example.test', '"q"@example.test', 'NULL'],
      }),
      messageRow(randomUUID(), { sendId, substitutions: { b: 2, a: { '': [null] } } }),
    ];
    const repository = new MessagesRepository(db());
    await db().transaction((manager) => repository.insertMessages(rows, manager));
    const ids = [rows[2]?.id ?? '', randomUUID(), rows[0]?.id ?? '', rows[1]?.id ?? ''];

    const read = await new DeliveryViewReads(db()).messages(ids);
    const expected = await repository.findByIds(ids);

    expect(read.map((message) => message.id)).toEqual([rows[2]?.id, rows[0]?.id, rows[1]?.id]);
    expect(read.map(toDeliveryView)).toEqual(expected.map(toDeliveryView));
    expect(read.map(recipientPartOf)).toEqual(expected.map(recipientPartOf));
    const columns = (message: DeliveryMessage) => ({
      sendId: message.sendId,
      contentPurgedAt: message.contentPurgedAt,
    });
    expect(read.map(columns)).toEqual(expected.map(columns));
    // The JSON column keeps its keys' order: the recipient part carries them as given.
    expect(Object.keys(read[0]?.substitutions ?? {})).toEqual(['b', 'a']);
  });

  it('reads the send contents TypeORM reads: sources with attachments in order, raw, purged, gone', async () => {
    const [withFiles, plain, raw, purged] = [
      randomUUID(),
      randomUUID(),
      randomUUID(),
      randomUUID(),
    ];
    const files = [randomBytes(70_000), Buffer.from([0, 0x5c, 0x22, 0xff]), Buffer.alloc(0)];
    const sends = new SendsRepository(db());
    await db().transaction(async (manager) => {
      await sends.insert(
        sendRow(withFiles),
        // Stored out of order: composed in their positions' order.
        [2, 0, 1].map((position) =>
          attachment(withFiles, position, files[position] ?? Buffer.alloc(0)),
        ),
        [],
        manager,
      );
      await sends.insert(
        sendRow(plain, { templated: false, headers: null, substitutions: null }),
        [],
        [],
        manager,
      );
      await sends.insert(
        sendRow(raw, {
          rawContent: Buffer.from('Subject: hi\r\n\r\n\xe9\r\n', 'latin1'),
          subject: null,
        }),
        [],
        [],
        manager,
      );
      await sends.insert(
        sendRow(purged, { purgedAt: at('2030-01-02T00:00:00.000Z') }),
        [],
        [],
        manager,
      );
    });
    const reads = new DeliveryViewReads(db());

    for (const sendId of [withFiles, plain, raw, purged, randomUUID()]) {
      await expect(reads.sendContent(sendId)).resolves.toEqual(await sends.findContent(sendId));
    }
    const sources = await reads.sendContent(withFiles);
    if (!sources || Buffer.isBuffer(sources)) throw new Error('expected sources');
    expect(sources.attachments.map((file) => Buffer.from(file.data, 'base64'))).toEqual(files);
    expect(await reads.sendContent(purged)).toBeUndefined();
    expect(await reads.sendContent(raw)).toEqual(
      Buffer.from('Subject: hi\r\n\r\n\xe9\r\n', 'latin1'),
    );
  });
});
