export * from './broadcast';
export * from './jetstream-consumer';
export * from './nats.module';
export * from './nest-packet';
export * from './rpc-client';
export * from './service-bootstrap';
export * from './service-transport';
export * from './upload-store';
