import { automaticSuite } from './suites/automatic.suite';
import { checkSuite } from './suites/check.suite';
import { eventsSuite } from './suites/events.suite';
import { snapshotSuite } from './suites/snapshot.suite';
import { suppressionsSuite } from './suites/suppressions.suite';
import { startSuppressionsService, type SuppressionsTestApp } from './suppressions-test-app';

/** One instance of the service for every suite; every test uses its own accounts. */
describe('suppressions service', () => {
  let app: SuppressionsTestApp | undefined;

  beforeAll(async () => {
    app = await startSuppressionsService();
  });

  afterAll(async () => {
    await app?.close();
  });

  const getApp = (): SuppressionsTestApp => {
    if (!app) throw new Error('the suppressions service did not start');
    return app;
  };

  suppressionsSuite(getApp);
  checkSuite(getApp);
  eventsSuite(getApp);
  automaticSuite(getApp);
  snapshotSuite(getApp);
});
