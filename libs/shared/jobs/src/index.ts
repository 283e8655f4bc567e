export * from './declared-methods';
export * from './periodic-job.decorator';
export * from './periodic-jobs';
export * from './periodic-jobs.module';
