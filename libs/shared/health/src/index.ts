export * from './health-server';
export * from './health-settings';
export * from './readiness';
