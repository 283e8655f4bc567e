import type { Page, PageRequest } from '@envoi/contracts-core';
import type { ObjectLiteral, SelectQueryBuilder } from 'typeorm';

/**
 * Keyset pagination over a monotonically increasing `seq` column, newest first.
 * `after` moves towards older rows, `before` towards newer ones; positions are `seq` values.
 */
export async function keysetPage<T extends ObjectLiteral & { seq: string }>(
  query: SelectQueryBuilder<T>,
  alias: string,
  page: PageRequest,
): Promise<Page<T>> {
  const seq = `${alias}.seq`;
  const backwards = page.before !== undefined;
  if (page.after !== undefined) query.andWhere(`${seq} < :afterSeq`, { afterSeq: page.after });
  if (backwards) query.andWhere(`${seq} > :beforeSeq`, { beforeSeq: page.before });
  const rows = await query
    .orderBy(seq, backwards ? 'ASC' : 'DESC')
    .take(page.limit + 1)
    .getMany();
  const hasMore = rows.length > page.limit;
  const data = rows.slice(0, page.limit);
  if (backwards) data.reverse();
  const first = data[0];
  const last = data[data.length - 1];
  if (backwards) {
    return {
      data,
      has_more: data.length > 0,
      ...(last ? { next_position: last.seq } : {}),
      ...(hasMore && first ? { previous_position: first.seq } : {}),
    };
  }
  return {
    data,
    has_more: hasMore,
    ...(hasMore && last ? { next_position: last.seq } : {}),
    ...(page.after !== undefined && first ? { previous_position: first.seq } : {}),
  };
}
