import { describe, expect, it } from '@jest/globals';
import { parseOrgIdHeader } from '../../src/auth/org-header.ts';
import { DomainError } from '../../src/errors/domain.ts';

function read(header: string | undefined): number | null | { status: number; message: string } {
  try {
    return parseOrgIdHeader(header);
  } catch (error) {
    if (!(error instanceof DomainError)) throw error;
    return { status: error.status, message: error.message };
  }
}

describe('parseOrgIdHeader', () => {
  it.each<[string | undefined, number | null]>([
    [undefined, null],
    ['', null],
    ['2', 2],
    ['0', null],
    ['-3', null],
    ['9007199254740991', Number.MAX_SAFE_INTEGER],
    // Past 2^53 but within int64: an org as unknown as the value sent.
    ['9223372036854775807', Number.MAX_SAFE_INTEGER],
    ['-9223372036854775808', null],
  ])('%j is org %p', (header, org) => {
    expect(read(header)).toBe(org);
  });

  it.each([' 2', '2.0', '0x2', '1e1', '+2', '02', '-0', '2 ', 'two', '--1'])('%j answers 400 with Go\'s invalid syntax', (header) => {
    expect(read(header)).toEqual({ status: 400, message: `strconv.ParseInt: parsing ${JSON.stringify(header)}: invalid syntax` });
  });

  it.each(['9223372036854775808', '-9223372036854775809', '1'.repeat(40)])('%j answers 400 out of range', (header) => {
    expect(read(header)).toEqual({ status: 400, message: `strconv.ParseInt: parsing ${JSON.stringify(header)}: value out of range` });
  });
});
