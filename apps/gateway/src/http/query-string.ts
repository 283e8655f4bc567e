import { parse } from 'node:querystring';

export type QueryParams = Record<string, string | string[]>;

/**
 * The gateway's query string parser (Fastify's `querystringParser`): Fastify's own semantics
 * (`+` is a space, a repeated parameter becomes an array, no key limit), except that an empty
 * value counts as absent. Go clients send every parameter, unset ones empty
 * (`?cursor=&limit=100&status=`), and mean the same as without them.
 */
export function parseQueryString(raw: string): QueryParams {
  const parsed = parse(raw, '&', '=', { maxKeys: 0 });
  const query: QueryParams = Object.create(null) as QueryParams;
  for (const [name, value] of Object.entries(parsed)) {
    const given = (Array.isArray(value) ? value : [value ?? '']).filter((item) => item !== '');
    if (given.length === 1) query[name] = given[0];
    else if (given.length > 1) query[name] = given;
  }
  return query;
}
