export * from './service-kit.module';
export * from './start-service';
