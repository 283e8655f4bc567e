import { parseDeviations, pointerCovers } from './deviations';

function yaml(entry: string): string {
  return `deviations:\n  - ${entry.trim().split('\n').join('\n    ')}\n`;
}

const STATUS_ENTRY = `
id: v2-rate-limited
operation: '*'
status: 429
schema: '#/components/schemas/ErrorResponse'
reason: api.md §8 limits every endpoint`;

describe('parseDeviations', () => {
  it('reads entries and defaults the api to v2', () => {
    expect(parseDeviations(yaml(STATUS_ENTRY))).toEqual([
      {
        id: 'v2-rate-limited',
        api: 'v2',
        operation: '*',
        status: 429,
        schema: '#/components/schemas/ErrorResponse',
        reason: 'api.md §8 limits every endpoint',
      },
    ]);
  });

  it('reads pointer, route, headers and todo entries', () => {
    const text = [
      yaml(`
id: todo-website
operation: getAccount
pointer: /website
todo: true
reason: Envoi bug, to fix`),
      `  - id: probe\n    api: v2\n    route: GET /v2/nothing-here\n    status: 404\n    schema: '#/components/schemas/ErrorResponse'\n    headers: [retry-after]\n    reason: api.md §7.1 error body\n`,
    ].join('');
    expect(parseDeviations(text).map((entry) => entry.id)).toEqual(['todo-website', 'probe']);
  });

  it.each([
    ['an unknown field', `${STATUS_ENTRY}\nstatuses: [1]`, /must NOT have additional properties/],
    [
      'an id that is not kebab-case',
      STATUS_ENTRY.replace('v2-rate-limited', 'Rate_Limited'),
      /pattern/,
    ],
    [
      'a reason without a spec section',
      STATUS_ENTRY.replace('api.md §8', 'we like it'),
      /api\.md §N/,
    ],
    ['a todo reason that does not say so', `${STATUS_ENTRY}\ntodo: true`, /Envoi bug, to fix/],
    [
      'both operation and route',
      `${STATUS_ENTRY}\nroute: GET /v2/x`,
      /exactly one of operation and route/,
    ],
    ['neither operation nor route', STATUS_ENTRY.replace("operation: '*'", ''), /exactly one/],
    [
      'a status entry without schema',
      STATUS_ENTRY.replace(/schema: .*/, ''),
      /needs status and schema/,
    ],
    ['a pointer entry with a schema', `${STATUS_ENTRY}\npointer: /x`, /no schema or headers/],
    [
      'a route entry with a pointer',
      `${STATUS_ENTRY.replace("operation: '*'", 'route: GET /v2/x')}\npointer: /x`,
      /cannot excuse a pointer/,
    ],
    ['a status out of range', STATUS_ENTRY.replace('429', '42'), /status must be >= 100/],
  ])('rejects %s', (_, entry, problem) => {
    expect(() => parseDeviations(yaml(entry))).toThrow(problem);
  });

  it('rejects a duplicate id', () => {
    expect(() =>
      parseDeviations(yaml(STATUS_ENTRY) + yaml(STATUS_ENTRY).slice('deviations:\n'.length)),
    ).toThrow(/duplicate id v2-rate-limited/);
  });

  it('rejects a file without a deviations list', () => {
    expect(() => parseDeviations('other: []\n')).toThrow(/malformed/);
  });
});

describe('pointerCovers', () => {
  it('matches token by token, * standing for any one token', () => {
    expect(pointerCovers('/website', '/website')).toBe(true);
    expect(pointerCovers('/data/*/role', '/data/3/role')).toBe(true);
    expect(pointerCovers('/data/*/role', '/data/3/name')).toBe(false);
    expect(pointerCovers('/data/*/role', '/data/3/role/x')).toBe(false);
    expect(pointerCovers('/website', '')).toBe(false);
  });
});
