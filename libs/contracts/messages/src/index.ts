export * from './delivery-view';
export * from './errors';
export * from './limits';
export * from './records';
export * from './requests';
export * from './subjects';
export * from './tracking';
export * from './v1';
