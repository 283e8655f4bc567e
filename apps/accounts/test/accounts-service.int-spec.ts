import { type AccountsTestApp, startAccountsService } from './accounts-test-app';
import { accountsSuite } from './suites/accounts.suite';
import { apiKeyAuthSuite } from './suites/api-key-auth.suite';
import { apiKeysSuite } from './suites/api-keys.suite';
import { domainScopesSuite } from './suites/domain-scopes.suite';
import { membersSuite } from './suites/members.suite';
import { subAccountKeysSuite } from './suites/sub-account-keys.suite';
import { subAccountsSuite } from './suites/sub-accounts.suite';
import { suspensionSuite } from './suites/suspension.suite';
import { usageSuite } from './suites/usage.suite';

/**
 * One instance of the service for every suite: instances share the `accounts` queue group, and
 * one closing while another suite still runs would drop the requests routed to it (the test
 * harness does not shut the NATS server down gracefully). Every test creates its own accounts.
 * The real domains service runs beside it, on a bus and database private to this file.
 */
describe('accounts service', () => {
  let app: AccountsTestApp | undefined;

  beforeAll(async () => {
    app = await startAccountsService();
  }, 90_000);

  afterAll(async () => {
    await app?.close();
  }, 30_000);

  const getApp = (): AccountsTestApp => {
    if (!app) throw new Error('the accounts service did not start');
    return app;
  };

  accountsSuite(getApp);
  membersSuite(getApp);
  apiKeysSuite(getApp);
  apiKeyAuthSuite(getApp);
  domainScopesSuite(getApp);
  subAccountsSuite(getApp);
  subAccountKeysSuite(getApp);
  suspensionSuite(getApp);
  usageSuite(getApp);
});
