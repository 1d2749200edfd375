import { DomainError } from '../errors/domain.ts';
import { MESSAGES } from '../errors/messages.ts';

const INT64_MAX = 2n ** 63n - 1n;
const INT64_MIN = -(2n ** 63n);

/**
 * The org an `X-Grafana-Org-Id` header asks for, or null when absent or not positive (the user's
 * current org then). Only an integer as it is written in decimal is taken: digits without a leading
 * zero, a minus sign at most, within 64 bits. The original's `strconv.ParseInt(value, 10, 64)` also
 * takes `+2` and `02`; those are refused too, so that an org has one spelling (the principal cache
 * keys on the header as sent) and a mangled header is not read as some org. Anything else is a 400
 * with Go's message for invalid syntax, rather than a guess: `Number()` would take ` 2`, `2.0`, `0x2`.
 */
export function parseOrgIdHeader(header: string | undefined): number | null {
  if (header === undefined || header === '') return null;
  if (!/^(?:0|-?[1-9][0-9]*)$/.test(header)) throw new DomainError('BAD_REQUEST', MESSAGES.auth.orgHeaderInvalid(header, 'invalid syntax'));
  const value = BigInt(header);
  if (value > INT64_MAX || value < INT64_MIN) throw new DomainError('BAD_REQUEST', MESSAGES.auth.orgHeaderInvalid(header, 'value out of range'));
  if (value <= 0n) return null;
  // No org has an id past 2^53 (a double could round one past PostgreSQL's bigint): the largest
  // exact one is as unknown an org as the value sent.
  return value > BigInt(Number.MAX_SAFE_INTEGER) ? Number.MAX_SAFE_INTEGER : Number(value);
}
