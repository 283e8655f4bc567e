import { randomUUID } from 'node:crypto';

import type { MessageContentRow, MessageRow } from '../src/messages/messages.repository';

export const at = (iso: string): Date => new Date(iso);

/** A row with a value other than the column's default in every column. */
export function messageRow(id: string, changes: Partial<MessageRow> = {}): MessageRow {
  return {
    id,
    accountId: '0190aaaa-0000-7000-8000-000000000001',
    domainId: '0190aaaa-0000-7000-8000-000000000002',
    domain: 'example.test',
    kind: 'conversation',
    api: 'v1',
    credentialId: '0190aaaa-0000-7000-8000-000000000003',
    sender: 'from@example.test',
    recipient: 'To@Example.test',
    envelopeRecipients: ['to@example.test', 'cc@example.test'],
    subject: 'Hello, "world" {1} \\ NULL',
    tags: ['a,b', 'c'],
    status: 'Scheduled',
    messageIdHeader: `<${id}@example.test>`,
    sandbox: true,
    sandboxResult: 'bounce',
    trackOpens: true,
    trackClicks: false,
    retentionMetadataDays: 30,
    retentionDataDays: 0,
    firstAttemptAt: at('2031-02-03T04:05:06.789Z'),
    expiresAt: at('2031-02-04T04:05:06.001Z'),
    retainUntil: at('2031-03-05T00:00:00.000Z'),
    jobId: randomUUID(),
    createdAt: at('2030-01-01T10:00:00.123Z'),
    updatedAt: at('2030-01-01T10:00:01.456Z'),
    sentAt: at('2030-01-01T10:00:02.000Z'),
    deliveredAt: at('2030-01-01T10:00:03.000Z'),
    numAttempts: 3,
    deliveryAttempts: [{ time: '2030-01-01T10:00:02Z', log: '250 "ok" {a,b} \\', status: 'sent' }],
    openCount: 4,
    clickCount: 5,
    bounceClassification: 'Mailbox Full',
    sendId: null,
    recipientName: 'Ann "A" {1} \\ NULL',
    substitutions: { zeta: 1, alpha: { b: [1, 'x'], a: null }, __proto__x: '\\ "q"' },
    contentPurgedAt: at('2030-01-01T10:00:04.000Z'),
    ...changes,
  };
}

export function contentRow(messageId: string, raw: Buffer | null): MessageContentRow {
  return {
    messageId,
    raw,
    size: raw?.length ?? 0,
    purgeAt: at('2030-02-01T00:00:00.500Z'),
    purgedAt: raw ? null : at('2030-01-02T00:00:00.000Z'),
  };
}
