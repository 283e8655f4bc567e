/** Where a service serves its health endpoints (ServiceEnv declares both settings). */
export interface HealthSettings {
  HEALTH_HOST: string;
  HEALTH_PORT: number;
}
