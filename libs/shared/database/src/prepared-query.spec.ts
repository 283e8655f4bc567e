import { createHash } from 'node:crypto';

import { preparedStatementName } from './prepared-query';

function digestName(sql: string): string {
  return `envoi_${createHash('sha1').update(sql).digest('hex').slice(0, 24)}`;
}

describe('preparedStatementName', () => {
  it('names a text by its digest, the same name each time it is asked', () => {
    const sql = 'SELECT 1 WHERE $1::int > 0';
    expect(preparedStatementName(sql)).toBe(digestName(sql));
    expect(preparedStatementName(`${'SELECT 1'} WHERE $1::int > 0`)).toBe(digestName(sql));
  });

  it('gives different texts different names, before and after it forgets what it remembered', () => {
    const texts = Array.from({ length: 2_500 }, (_, index) => `SELECT ${index}`);
    const first = texts.map(preparedStatementName);
    const again = texts.map(preparedStatementName);
    expect(new Set(first).size).toBe(texts.length);
    expect(again).toEqual(first);
    expect(first).toEqual(texts.map(digestName));
  });
});
