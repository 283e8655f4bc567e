export * from './deliveries';
export * from './errors';
export * from './records';
export * from './requests';
export * from './stream';
export * from './subjects';
