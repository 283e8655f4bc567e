export * from './domain-answer-cache';
export * from './domain-changes';
export * from './domains-client';
export * from './domains-client.module';
