/** The rows of an UPDATE … RETURNING, which TypeORM answers as `[rows, affected]`. */
export function updatedRows<T>(result: unknown): T[] {
  if (Array.isArray(result) && Array.isArray(result[0])) return result[0] as T[];
  return Array.isArray(result) ? (result as T[]) : [];
}
