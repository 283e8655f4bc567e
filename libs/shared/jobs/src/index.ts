export * from './periodic-job.decorator';
export * from './periodic-jobs';
export * from './periodic-jobs.module';
