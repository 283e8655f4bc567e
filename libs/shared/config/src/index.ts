export * from './base-env';
export * from './load-config';
export * from './service-envs';
export * from './setting-decorators';
