import { DomainError } from '../errors/domain.ts';
import { MESSAGES } from '../errors/messages.ts';

const INT64_MAX = 2n ** 63n - 1n;
const INT64_MIN = -(2n ** 63n);

/**
 * The org an `X-Grafana-Org-Id` header asks for, read as the original reads it (Go's
 * `strconv.ParseInt(value, 10, 64)`: an optional sign and decimal digits, nothing else, within 64
 * bits), or null when absent or not positive (the user's current org then). Anything else is a 400
 * with Go's own message, rather than a guess: `Number()` would take ` 2`, `2.0`, `0x2` or `1e1`.
 */
export function parseOrgIdHeader(header: string | undefined): number | null {
  if (header === undefined || header === '') return null;
  if (!/^[+-]?[0-9]+$/.test(header)) throw new DomainError('BAD_REQUEST', MESSAGES.auth.orgHeaderInvalid(header, 'invalid syntax'));
  const value = BigInt(header);
  if (value > INT64_MAX || value < INT64_MIN) throw new DomainError('BAD_REQUEST', MESSAGES.auth.orgHeaderInvalid(header, 'value out of range'));
  if (value <= 0n) return null;
  // No org has an id past 2^53 (a double could round one past PostgreSQL's bigint): the largest
  // exact one is as unknown an org as the value sent.
  return value > BigInt(Number.MAX_SAFE_INTEGER) ? Number.MAX_SAFE_INTEGER : Number(value);
}
