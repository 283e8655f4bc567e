import { type MessagesTestApp, startMessagesService } from './messages-test-app';
import { acceptSuite } from './suites/accept.suite';
import { conversationSuite } from './suites/conversation.suite';
import { creditSuite } from './suites/credit.suite';
import { deliverySuite } from './suites/delivery.suite';
import { deliveryBatchSuite } from './suites/delivery-batch.suite';
import { idempotencySuite } from './suites/idempotency.suite';
import { readSuite } from './suites/read.suite';
import { rulesSuite } from './suites/rules.suite';
import { scheduleSuite } from './suites/schedule.suite';
import { sendsSuite } from './suites/sends.suite';
import { trackingSuite } from './suites/tracking.suite';
import { uploadSuite } from './suites/upload.suite';

/**
 * One messages service (in this process) next to the real accounts, domains and suppressions
 * services, on a private database and nats-server. Every test uses its own accounts and domains.
 */
describe('messages service', () => {
  let app: MessagesTestApp | undefined;

  beforeAll(async () => {
    app = await startMessagesService();
  }, 180_000);

  afterAll(async () => {
    await app?.close();
  }, 60_000);

  const getApp = (): MessagesTestApp => {
    if (!app) throw new Error('the messages service did not start');
    return app;
  };

  acceptSuite(getApp);
  idempotencySuite(getApp);
  rulesSuite(getApp);
  conversationSuite(getApp);
  scheduleSuite(getApp);
  readSuite(getApp);
  uploadSuite(getApp);
  deliverySuite(getApp);
  deliveryBatchSuite(getApp);
  trackingSuite(getApp);
  sendsSuite(getApp);
  creditSuite(getApp);
});
