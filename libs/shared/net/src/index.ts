export * from './ip-allow-list';
