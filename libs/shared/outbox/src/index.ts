export * from './dead-letters';
export * from './event-stream';
export * from './inbox';
export * from './outbox';
export * from './outbox.module';
export * from './outbox-message.entity';
export * from './outbox-relay';
export * from './stream-publisher';
