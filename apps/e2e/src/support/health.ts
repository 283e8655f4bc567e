import http from 'node:http';

export interface HealthAnswer {
  status: number;
  body: unknown;
}

/** GET on a service's plain-HTTP health port (`/healthz` or `/readyz`). */
export function getHealth(baseUrl: string, path: '/healthz' | '/readyz'): Promise<HealthAnswer> {
  return new Promise((resolve, reject) => {
    const request = http.get(`${baseUrl}${path}`, (response) => {
      let text = '';
      response.on('data', (chunk: Buffer) => (text += chunk.toString()));
      response.on('end', () =>
        resolve({ status: response.statusCode ?? 0, body: JSON.parse(text) as unknown }),
      );
    });
    request.setTimeout(10_000, () => request.destroy(new Error(`${baseUrl}${path} timed out`)));
    request.on('error', reject);
  });
}

/** Each service's `/readyz` status code, by service name. */
export async function readinessByService(
  health: Record<string, string>,
): Promise<Record<string, number>> {
  const entries = await Promise.all(
    Object.entries(health).map(
      async ([service, url]) => [service, (await getHealth(url, '/readyz')).status] as const,
    ),
  );
  return Object.fromEntries(entries);
}

/** Whether every service answered `/readyz` with `status`. */
export const allAnswer =
  (status: number) =>
  (statuses: Record<string, number>): boolean =>
    Object.values(statuses).every((answered) => answered === status);
