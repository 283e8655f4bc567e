export * from './base-env';
export * from './load-config';
export * from './outbound-env';
export * from './service-envs';
export * from './setting-decorators';
