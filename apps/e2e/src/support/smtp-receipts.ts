import { mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';

import type { SinkReceipt, SmtpSink } from '@envoi/shared-testing';

import { e2eEnvironment } from './environment';

/** A message the recipients' MX accepted, as the e2e specs read it back. */
export interface StoredReceipt {
  mailFrom: string;
  /** MAIL FROM's BODY parameter, when given. */
  body?: string;
  rcptTo: string[];
  secure: boolean;
  raw: string;
}

/** Global setup: every message the sink accepts is written to `dir` for the spec workers. */
export function persistReceipts(sink: SmtpSink, dir: string): void {
  mkdirSync(dir, { recursive: true });
  let count = 0;
  sink.onReceipt(() => {
    const receipt: SinkReceipt | undefined = sink.receipts[sink.receipts.length - 1];
    if (!receipt) return;
    count += 1;
    const stored: StoredReceipt = {
      mailFrom: receipt.mailFrom,
      ...(receipt.body !== undefined ? { body: receipt.body } : {}),
      rcptTo: receipt.rcptTo,
      secure: receipt.secure,
      raw: receipt.raw.toString('utf8'),
    };
    writeFileSync(path.join(dir, `${String(count).padStart(6, '0')}.json`), JSON.stringify(stored));
  });
}

/** Every message the MX has accepted for `recipient` so far. */
export function receiptsFor(recipient: string): StoredReceipt[] {
  return storedReceiptsFor(e2eEnvironment().smtpReceiptsDir, recipient);
}

/** Every notification the platform's smarthost has accepted for `recipient` so far. */
export function notificationsFor(recipient: string): StoredReceipt[] {
  return storedReceiptsFor(e2eEnvironment().notificationReceiptsDir, recipient);
}

function storedReceiptsFor(dir: string, recipient: string): StoredReceipt[] {
  return readdirSync(dir)
    .filter((name) => name.endsWith('.json'))
    .map((name) => JSON.parse(readFileSync(path.join(dir, name), 'utf8')) as StoredReceipt)
    .filter((receipt) => receipt.rcptTo.includes(recipient.toLowerCase()));
}
