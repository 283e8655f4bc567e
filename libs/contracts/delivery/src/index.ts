export * from './complaints';
export * from './events';
export * from './outcome-payload';
