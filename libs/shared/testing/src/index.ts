export * from './dns-server';
export * from './infrastructure-handle';
export * from './isolated-platform';
export * from './poll-until';
export * from './service-harness';
export * from './smtp-sink';
