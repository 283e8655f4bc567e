export * from './batch-events';
export * from './contract-decoder';
export * from './dead-letters';
export * from './handler-check';
export * from './stream-consumer.decorator';
export * from './stream-consumers';
export * from './stream-consumers.module';
