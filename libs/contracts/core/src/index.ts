export * from './errors';
export * from './hostnames';
export * from './pagination';
export * from './responses';
export * from './streams';
export * from './subjects';
export * from './text';
export * from './validation';
