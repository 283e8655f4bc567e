export * from './errors';
export * from './pagination';
export * from './responses';
export * from './subjects';
export * from './validation';
