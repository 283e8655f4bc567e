export * from './events';
export * from './outcome-payload';
