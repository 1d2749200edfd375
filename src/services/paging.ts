/**
 * How the listings of users, orgs, members, teams and service accounts read their search text and
 * page as the original reads them from the query string.
 */

export interface Paging {
  query?: string | null;
  page?: number | null;
  perPage?: number | null;
}

/** The original's default page size for user, org and member listings. */
export const DEFAULT_PER_PAGE = 1000;

/** `text` with LIKE's own wildcards (and the escape) taken literally. */
export function escapeLike(text: string): string {
  return text.replace(/[\\%_]/g, '\\$&');
}

/** `text` as a LIKE pattern matching it anywhere, its own wildcards taken literally. */
export function containsPattern(text: string): string {
  return `%${escapeLike(text)}%`;
}

/**
 * Page number and size as the original reads them from the query string: a size of 0 or less
 * means `defaultPerPage`, pages count from `firstPage` (lower numbers mean the first page).
 */
export function pageWindow(paging: Paging, firstPage: 0 | 1, defaultPerPage = DEFAULT_PER_PAGE): { page: number; perPage: number; offset: number } {
  const perPage = paging.perPage && paging.perPage > 0 ? paging.perPage : defaultPerPage;
  const page = paging.page && paging.page > firstPage ? paging.page : firstPage;
  // Far pages are simply past the end; keep the offset an exact integer for PostgreSQL.
  const offset = Math.min(perPage * (page - firstPage), Number.MAX_SAFE_INTEGER);
  return { page, perPage, offset };
}
