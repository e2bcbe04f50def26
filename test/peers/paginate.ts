/** One page of `items` starting at the opaque `cursor` (a decimal offset); no pageSize = everything. */
export function paginate<T>(
  items: T[],
  cursor: string | undefined,
  pageSize: number | undefined,
): { page: T[]; nextCursor?: string } {
  const start = cursor === undefined ? 0 : Number.parseInt(cursor, 10);
  if (!Number.isInteger(start) || start < 0 || start > items.length)
    throw new Error(`invalid cursor ${cursor}`);
  if (pageSize === undefined) return { page: items.slice(start) };
  const end = start + pageSize;
  const page = items.slice(start, end);
  return end < items.length ? { page, nextCursor: String(end) } : { page };
}
