export * from './listener-stream.controller';
export * from './listener-stream-columns';
export * from './listener-stream-event-columns';
export * from './listener-stream-providers';
export * from './listener-stream-store';
export * from './listener-streams';
