export * from './batch-recorder';
export * from './check-outbound-url';
export * from './endpoint-counters';
export * from './outbound-client';
export * from './outbound-error';
export * from './outbound-policy';
export * from './retry-schedule';
export * from './standard-webhook-signature';
