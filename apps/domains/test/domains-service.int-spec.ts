import { type DomainsTestApp, startDomainsService } from './domains-test-app';
import { dnsChecksSuite } from './suites/dns-checks.suite';
import { domainsSuite } from './suites/domains.suite';
import { monitoringSuite, outboxSuite } from './suites/monitoring.suite';

/**
 * One instance of the service for every suite (instances share the `domains` queue group), with
 * a real DNS server on loopback as its only resolver. Every test uses its own accounts and domains.
 */
describe('domains service', () => {
  let app: DomainsTestApp | undefined;

  beforeAll(async () => {
    app = await startDomainsService();
  });

  afterAll(async () => {
    await app?.close();
  });

  const getApp = (): DomainsTestApp => {
    if (!app) throw new Error('the domains service did not start');
    return app;
  };

  domainsSuite(getApp);
  dnsChecksSuite(getApp);
  monitoringSuite(getApp);
  outboxSuite(getApp);
});
