export * from './disabled-event';
export * from './errors';
export * from './inbound';
export * from './records';
export * from './requests';
export * from './stream';
export * from './subjects';
export * from './verp';
