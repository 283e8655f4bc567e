export * from './logger';
export * from './trace-context';
