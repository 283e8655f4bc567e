export * from './deliveries';
export * from './disabled-event';
export * from './errors';
export * from './records';
export * from './requests';
export * from './stream';
export * from './subjects';
