export * from './api-key-events';
export * from './errors';
export * from './records';
export * from './requests';
export * from './scopes';
export * from './smtp-credentials';
export * from './sub-accounts';
export * from './subjects';
