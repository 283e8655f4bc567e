export * from './certificates';
export * from './nats-server';
export * from './platform';
export * from './ports';
export * from './postgres';
export * from './processes';
export * from './services';
