import { describe, expect, it } from '@jest/globals';
import fc from 'fast-check';
import { posix } from 'node:path';
import { safeProxyPath } from '../../../src/upstream/policy/path.ts';
import { joinUpstreamPath } from '../../../src/upstream/target.ts';

describe('joinUpstreamPath (JoinURLFragments)', () => {
  it.each([
    ['/root/', 'path/to/folder/', '/root/path/to/folder/'],
    ['/root/', '/path/to/folder/', '/root/path/to/folder/'],
    ['/root', 'path/to/folder/', '/root/path/to/folder/'],
    ['/root', '/path', '/root/path'],
    ['/root/', '', '/root/'],
    ['/root', '', '/root'],
    ['', '', ''],
    ['', 'api/v1/query', '/api/v1/query'],
    ['/', 'api/v1/query', '/api/v1/query'],
    ['/prometheus', 'api/services/afsd%2Fafsd/operations', '/prometheus/api/services/afsd%2Fafsd/operations'],
    ['/a/', 'b/', '/a/b/'],
  ])('%j + %j = %j', (base, path, joined) => {
    expect(joinUpstreamPath(base, path)).toBe(joined);
  });
});

describe('safeProxyPath', () => {
  const traversal = [
    '..', '.', '../', './', './x', '../x', '../../etc/passwd', 'a/..', 'a/.', 'a/../b', 'a/../../b', 'a/./b', 'a/b/../../../c',
    '%2e%2e', '%2e%2e/', '%2E%2E%2F', '%2e%2e%2fx', '%2e', '%2e/x', '.%2e', '.%2e/x', '%2e./x', '%2E.', '..%2f', '..%2Fx',
    '..%2f..%2fx', 'a%2f..%2fb', 'a%2F..%2F..%2Fx', '%2F..%2Fx', 'a/%2e%2e/%2e%2e/x', '%252e%252e', '%252e%252e/x', '%252E%252E%252Fx',
    '%25252e%25252e/x', '..%252f', 'a%252f..%252fb', '%25%32%65%25%32%65/x', '//evil', '//evil.example/x', '/abs', '/', 'a//b', 'a///b',
    'a%2F%2Fb', '%2F%2Fevil', '%2Fetc', '\\..\\', '..\\x', 'a\\b', '%5c..%5c', '%5C..%5Cx', '..%5cx', '%255c..%255c', '%00', 'a%00b',
    '..%00/x', 'a%0ab', 'a%0d%0aX-Injected:%201', '%7f', '%c2%85', '..;/x', 'a/..;/b', '..;jsessionid=1/x', '..%20/x', '%2e%2e%20/x',
    '%c0%ae%c0%ae/x', '%e0%80%ae%e0%80%ae/x', '%c0%af', '%ef%bc%8e%ef%bc%8e/x', '%ef%bc%8f%ef%bc%8fevil', '%ef%bc%bc', '%e2%80%a5/x',
    '%zz', 'a%2', 'a%', '%e9', 'a b', 'a\tb', 'é', 'a#b', '%25252525252e',
  ];
  it(`the corpus has plenty of entries (${traversal.length})`, () => {
    expect(traversal.length).toBeGreaterThanOrEqual(30);
  });
  it.each(traversal)('refuses %j', (path) => {
    expect(safeProxyPath(path)).toBeNull();
    expect(safeProxyPath(path)).toBeNull();
  });

  const legitimate = [
    '', 'api/v1/query', 'api/v1/query_range', 'api/services/afsd%2Fafsd/operations', 'render', 'a.b/c..d', '_msearch', 'trailing/',
    'path/to/folder/', '...', 'a/.hidden', 'a/..b', 'a/b..', '.well-known/x', 'api/v1/label/__name__/values',
    'api/traces/abc%20def', 'x%252Fy', 'q%3Fa=1', '100%25', 'api/v1/series;x', 'caf%C3%A9', 'a%2Fb/', 'loki/api/v1/tail',
    '~user', 'a:b', "a'b", 'a@b', 'a+b', 'a=b&c', 'a!b$c', '(x)', '*',
  ];
  it.each(legitimate)('passes %j unchanged', (path) => {
    expect(safeProxyPath(path)).toBe(path);
  });

  it('never lets an accepted path leave the base path, however it is decoded or resolved', () => {
    const piece = fc.constantFrom(
      'a', 'b', '.', '..', '...', '/', '%2e', '%2E', '%2f', '%2F', '%25', '%5c', '\\', ';', ' ', '%20', '%00', '%c0%ae',
      '%ef%bc%8e', '.a', 'x.', '%252e', '%252f', '~', ':',
    );
    let accepted = 0;
    fc.assert(
      fc.property(fc.array(piece, { minLength: 1, maxLength: 8 }), (pieces) => {
        const path = pieces.join('');
        if (safeProxyPath(path) === null) return;
        accepted++;
        // 1. What the URL class (and so http-proxy-3's target) makes of the joined path.
        const url = new URL(joinUpstreamPath('/base/', path), 'http://upstream.test');
        expect(url.pathname.startsWith('/base/')).toBe(true);
        // 2. What an upstream that decodes once, twice... and then normalises would see.
        let layer = path;
        for (let i = 0; i < 5; i++) {
          const resolved = posix.normalize(`/base/${layer}`);
          expect([path, resolved.startsWith('/base/') || resolved === '/base']).toEqual([path, true]);
          expect(resolved.replaceAll('\\', '/')).toBe(resolved);
          try {
            layer = decodeURIComponent(layer);
          } catch {
            break;
          }
        }
      }),
      { numRuns: 20000 },
    );
    expect(accepted).toBeGreaterThan(1000);
  });
});
