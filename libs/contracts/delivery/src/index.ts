export * from './complaints';
export * from './events';
export * from './outcome-batch';
export * from './outcome-payload';
