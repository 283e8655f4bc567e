import { CodedError } from '@envoi/contracts-core';
import {
  deliveryJobMessageIds,
  MessagesErrorCode,
  MessagesSubjects,
} from '@envoi/contracts-messages';
import { pollUntil } from '@envoi/shared-testing';

import {
  collected,
  messageBody,
  type MessagesTestApp,
  newSender,
  send,
  type Sender,
  UNKNOWN_ID,
  uuidOf,
} from '../messages-test-app';
import { getMessage } from './accept.suite';

function cancel(app: MessagesTestApp, sender: Sender, messageId: string, domains?: string[]) {
  return app.rpc.request(MessagesSubjects.cancelMessage, {
    account_id: sender.accountId,
    message_id: messageId,
    ...(domains ? { domains } : {}),
  });
}

async function jobState(
  app: MessagesTestApp,
  messageId: string,
): Promise<{ published: boolean; cancelled: boolean }> {
  const [row] = await app.dataSource.query<Array<{ published: boolean; cancelled: boolean }>>(
    `SELECT o.published_at IS NOT NULL AS published, o.cancelled_at IS NOT NULL AS cancelled
       FROM messages.outbox o JOIN messages.messages m ON m.job_id = o.id WHERE m.id = $1`,
    [messageId],
  );
  if (!row) throw new Error(`no job for ${messageId}`);
  return row;
}

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

export function scheduleSuite(getApp: () => MessagesTestApp): void {
  describe('messages service: scheduling and cancelling', () => {
    let app: MessagesTestApp;

    beforeAll(() => {
      app = getApp();
    });

    it('schedules: reception now, the delivery job only once first_attempt has come', async () => {
      const sender = await newSender(app);
      const firstAttempt = new Date(Date.now() + 3_000);
      const schedule = { first_attempt: firstAttempt.toISOString() };

      const result = await send(app, sender, messageBody(sender, { schedule }));

      expect(result.data[0]).toMatchObject({ status: 'scheduled', error: null, schedule });
      const id = uuidOf(result.data[0]?.id ?? null);
      await expect(getMessage(app, sender.accountId, id)).resolves.toMatchObject({
        status: 'Scheduled',
      });
      await collected(app.events, (event) => event.data.id === id, 1);
      expect(app.jobs.of((job) => deliveryJobMessageIds(job).includes(id))).toEqual([]);

      const [job] = await collected(
        app.jobs,
        (candidate) => deliveryJobMessageIds(candidate).includes(id),
        1,
        10_000,
      );
      expect(job?.receivedAt).toBeGreaterThanOrEqual(firstAttempt.getTime());
    });

    it('cancels a scheduled message: it becomes Cancelled and its job is never published', async () => {
      const sender = await newSender(app);
      const firstAttempt = new Date(Date.now() + 1_500);
      const result = await send(
        app,
        sender,
        messageBody(sender, { schedule: { first_attempt: firstAttempt.toISOString() } }),
      );
      const header = result.data[0]?.id ?? '';
      const id = uuidOf(header);

      await expect(cancel(app, sender, header)).resolves.toEqual({
        message: `message ${header} cancelled successfully`,
      });

      await expect(getMessage(app, sender.accountId, id)).resolves.toMatchObject({
        status: 'Cancelled',
      });
      await expect(jobState(app, id)).resolves.toEqual({ published: false, cancelled: true });
      // Well past its time, with the relay polling every 100 ms.
      await sleep(firstAttempt.getTime() + 1_000 - Date.now());
      expect(app.jobs.of((job) => deliveryJobMessageIds(job).includes(id))).toEqual([]);
      await expect(jobState(app, id)).resolves.toEqual({ published: false, cancelled: true });
      await expect(cancel(app, sender, id)).rejects.toMatchObject({
        code: MessagesErrorCode.MessageNotCancellable,
        message: 'only a scheduled message can be cancelled; this one is cancelled',
      });
    });

    it('cancels messages sharing a job: the job stays for the others, withdrawn with the last', async () => {
      const sender = await newSender(app);
      const firstAttempt = new Date(Date.now() + 60_000);
      const result = await send(
        app,
        sender,
        messageBody(sender, {
          recipients: [1, 2, 3].map((n) => ({ email: `shared-${n}@recipient.test` })),
          schedule: { first_attempt: firstAttempt.toISOString() },
        }),
      );
      const headers = result.data.map((entry) => entry.id ?? '');
      const ids = headers.map(uuidOf);
      const [job] = await app.dataSource.query<Array<{ payload: unknown; count: number }>>(
        `SELECT o.payload, (SELECT count(*)::int FROM messages.messages WHERE job_id = o.id) AS count
           FROM messages.outbox o JOIN messages.messages m ON m.job_id = o.id WHERE m.id = $1`,
        [ids[0]],
      );
      expect(job).toEqual({
        payload: { message_ids: ids, account_id: sender.accountId, attempt: 1 },
        count: 3,
      });

      for (const [n, header] of headers.slice(0, 2).entries()) {
        await expect(cancel(app, sender, header)).resolves.toEqual({
          message: `message ${header} cancelled successfully`,
        });
        await expect(getMessage(app, sender.accountId, ids[n] ?? '')).resolves.toMatchObject({
          status: 'Cancelled',
        });
        // Still due for the message not cancelled: the worker skips the cancelled ones.
        await expect(jobState(app, ids[n] ?? '')).resolves.toEqual({
          published: false,
          cancelled: false,
        });
      }
      await expect(cancel(app, sender, headers[0] ?? '')).rejects.toMatchObject({
        code: MessagesErrorCode.MessageNotCancellable,
        message: 'only a scheduled message can be cancelled; this one is cancelled',
      });
      await expect(getMessage(app, sender.accountId, ids[2] ?? '')).resolves.toMatchObject({
        status: 'Scheduled',
      });

      await expect(cancel(app, sender, headers[2] ?? '')).resolves.toEqual({
        message: `message ${headers[2]} cancelled successfully`,
      });
      for (const id of ids) {
        await expect(jobState(app, id)).resolves.toEqual({ published: false, cancelled: true });
      }
    });

    it('refuses to cancel a message that is not scheduled, and an unknown one', async () => {
      const sender = await newSender(app);
      const result = await send(app, sender, messageBody(sender));
      const header = result.data[0]?.id ?? '';

      await expect(cancel(app, sender, header)).rejects.toMatchObject({
        code: MessagesErrorCode.MessageNotCancellable,
        message: 'only a scheduled message can be cancelled; this one is received',
      });
      await expect(cancel(app, sender, UNKNOWN_ID)).rejects.toMatchObject({
        code: MessagesErrorCode.MessageNotFound,
      });
      await expect(cancel(app, sender, 'not-an-id')).rejects.toMatchObject({
        code: MessagesErrorCode.MessageNotFound,
      });
    });

    it('cancels only within the domain restriction', async () => {
      const sender = await newSender(app);
      const result = await send(
        app,
        sender,
        messageBody(sender, {
          schedule: { first_attempt: new Date(Date.now() + 60_000).toISOString() },
        }),
      );
      const header = result.data[0]?.id ?? '';

      await expect(cancel(app, sender, header, ['other.example.test'])).rejects.toMatchObject({
        code: MessagesErrorCode.MessageNotFound,
      });
      await expect(
        cancel(app, sender, header, [sender.domain.domain.toUpperCase()]),
      ).resolves.toEqual({ message: `message ${header} cancelled successfully` });
    });

    it('settles a cancel racing the relay: either cancelled and never published, or published and refused', async () => {
      const sender = await newSender(app);
      const firstAttempt = new Date(Date.now() + 2_000);
      const result = await send(
        app,
        sender,
        messageBody(sender, {
          schedule: { first_attempt: firstAttempt.toISOString() },
          recipients: Array.from({ length: 40 }, (_, n) => ({ email: `race-${n}@recipient.test` })),
        }),
      );
      const ids = result.data.map((entry) => uuidOf(entry.id));

      // Cancels spread around the moment the jobs come due (the relay polls every 100 ms).
      await sleep(firstAttempt.getTime() - 150 - Date.now());
      const outcomes = await Promise.all(
        ids.map(async (id, n) => {
          await sleep((n % 8) * 40);
          try {
            await cancel(app, sender, id);
            return 'cancelled' as const;
          } catch (error) {
            if (
              error instanceof CodedError &&
              error.hasCode(MessagesErrorCode.MessageNotCancellable)
            ) {
              return 'refused' as const;
            }
            throw error;
          }
        }),
      );

      // The send's one job ends up published or withdrawn, never both; a cancel answered
      // "cancelled" left its message Cancelled (skipped by the worker when the job comes), a
      // refused one left it Scheduled, and the job is withdrawn only when every cancel won.
      const states = await pollUntil(
        () => Promise.all(ids.map((id) => jobState(app, id))),
        (all) => all.every((state) => state.published !== state.cancelled),
        { what: 'the job to be published or cancelled' },
      );
      expect(new Set(states.map((state) => JSON.stringify(state))).size).toBe(1);
      const withdrawn = states[0]?.cancelled === true;
      await sleep(500);
      const published = app.jobs.of((job) => deliveryJobMessageIds(job).includes(ids[0] ?? ''));
      expect(published).toHaveLength(withdrawn ? 0 : 1);
      if (withdrawn) expect(outcomes.every((outcome) => outcome === 'cancelled')).toBe(true);
      for (const [n, id] of ids.entries()) {
        const record = await getMessage(app, sender.accountId, id);
        expect([outcomes[n], record.status]).toEqual(
          outcomes[n] === 'cancelled' ? ['cancelled', 'Cancelled'] : ['refused', 'Scheduled'],
        );
      }
    });
  });
}
