export * from './dns-server';
export * from './infrastructure-handle';
export * from './isolated-platform';
export * from './poll-until';
export * from './service-harness';
export * from './smtp-sink';
export * from './webhook-payloads';
export * from './webhook-receiver';
// Apps' tests take free loopback ports too, and apps cannot import shared-infra.
export { ensureDevCertificate, findFreePort } from '@envoi/shared-infra';
