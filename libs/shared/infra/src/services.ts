/** The services `npm start` runs, in start order. `migrations`: owns a schema. */
export interface PlatformService {
  name: string;
  migrations: boolean;
}

export const PLATFORM_SERVICES: readonly PlatformService[] = [
  { name: 'accounts', migrations: true },
  { name: 'domains', migrations: true },
  { name: 'suppressions', migrations: true },
  { name: 'messages', migrations: true },
  { name: 'delivery', migrations: true },
  { name: 'webhooks', migrations: true },
  { name: 'routes', migrations: true },
  { name: 'gateway', migrations: true },
  { name: 'smtp', migrations: false },
];
