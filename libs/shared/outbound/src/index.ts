export * from './check-outbound-url';
export * from './outbound-client';
export * from './outbound-error';
export * from './outbound-policy';
export * from './retry-schedule';
export * from './standard-webhook-signature';
