import { describe, expect, it } from '@jest/globals';
import fc from 'fast-check';
import { safeProxyPath } from '../../../src/upstream/policy/path.ts';
import { joinUpstreamPath } from '../../../src/upstream/target.ts';
import { cleanRelativePath } from '../../../src/upstream/policy/rules.ts';

// Properties of the per-request path checks, over generated paths built from the characters that
// matter (dots, slashes, backslashes, percent signs, hex digits, semicolons, spaces, letters).

const risky = fc.constantFrom('.', '.', '/', '/', '\\', '%', '2', 'e', 'E', 'f', 'F', '5', 'c', '0', ';', ' ', 'a', 'b', '_', '-', '~', '~');
const path = fc.array(risky, { maxLength: 24 }).map((chars) => chars.join(''));

/** Every reading an upstream might make of a path: as sent, and percent-decoded up to three times. */
function readings(value: string): string[] {
  const out = [value];
  let current = value;
  for (let i = 0; i < 3; i++) {
    try {
      current = decodeURIComponent(current);
    } catch {
      break;
    }
    out.push(current);
  }
  return out;
}

describe('safeProxyPath', () => {
  it('lets nothing through that could leave the data source base path once joined', () => {
    fc.assert(
      fc.property(path, (candidate) => {
        const safe = safeProxyPath(candidate);
        if (safe === null) return;
        expect(safe).toBe(candidate);
        for (const reading of readings(joinUpstreamPath('/base/', candidate))) {
          const normalised = reading.replace(/\\/g, '/');
          // No `.`/`..` segment (also as `.. ` or `..;x`) and no empty segment but a trailing one, in any reading.
          expect(normalised.startsWith('/base/')).toBe(true);
          const segments = normalised.slice('/base/'.length).split('/');
          expect(segments.some((s, i) => (s === '' && i < segments.length - 1) || /^\.{1,2} *(;.*)?$/.test(s))).toBe(false);
          expect(new URL(reading, 'http://upstream.example').pathname.startsWith('/base/')).toBe(true);
        }
      }),
      { numRuns: 3000 },
    );
  });
});

/** Grafana's CleanRelativePath, segment by segment, as a reference for the fast path. */
function referenceClean(value: string): string {
  const out: string[] = [];
  for (const segment of value.split('/')) {
    if (segment === '' || segment === '.') continue;
    if (segment === '..') out.pop();
    else out.push(segment);
  }
  return out.join('/');
}

describe('cleanRelativePath', () => {
  it('agrees with the segment-by-segment definition on every input', () => {
    fc.assert(fc.property(path, (candidate) => expect(cleanRelativePath(candidate)).toBe(referenceClean(candidate))), { numRuns: 3000 });
    for (const example of ['/rules', 'rules/', 'api/v1/query/../../admin', './x', 'a//b', '/', '', '..', 'a/.', '.hidden/x']) {
      expect([example, cleanRelativePath(example)]).toEqual([example, referenceClean(example)]);
    }
  });
});
