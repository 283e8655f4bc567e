export * from './data-source-options';
export * from './keyset-page';
export * from './migrate';
export * from './periodic-purge';
export * from './postgres-errors';
export * from './prepared-query';
export * from './snake-naming.strategy';
