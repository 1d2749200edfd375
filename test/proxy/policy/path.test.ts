import { describe, expect, it } from '@jest/globals';
import { MESSAGES } from '../../../src/errors/messages.ts';
import { extractProxyPath } from '../../../src/proxy/policy/path.ts';

describe('extractProxyPath', () => {
  it.each([
    // Reference 4: the regex is stripped from the escaped path; `%2F` survives.
    ['/api/datasources/proxy/1', { kind: 'id', id: 1 }, '', ''],
    ['/api/datasources/proxy/1/', { kind: 'id', id: 1 }, '', ''],
    ['/api/datasources/proxy/54/api/services/afsd%2Fafsd/operations', { kind: 'id', id: 54 }, 'api/services/afsd%2Fafsd/operations', ''],
    ['/api/datasources/proxy/1/api/v1/query?query=up&time=1', { kind: 'id', id: 1 }, 'api/v1/query', '?query=up&time=1'],
    ['/api/datasources/proxy/1/path/to/folder/', { kind: 'id', id: 1 }, 'path/to/folder/', ''],
    ['/api/datasources/proxy/007/x', { kind: 'id', id: 7 }, 'x', ''],
    // Only one slash goes with the reference, as with Grafana's regex (the rest is safeProxyPath's business).
    ['/api/datasources/proxy/1//x', { kind: 'id', id: 1 }, '/x', ''],
    ['/api/datasources/proxy/uid/P1809F7CD0C75ACF3', { kind: 'uid', uid: 'P1809F7CD0C75ACF3' }, '', ''],
    ['/api/datasources/proxy/uid/my-uid_1/x/', { kind: 'uid', uid: 'my-uid_1' }, 'x/', ''],
    ['/api/datasources/proxy/uid/a-b/api/v1/query?q=%2F', { kind: 'uid', uid: 'a-b' }, 'api/v1/query', '?q=%2F'],
    // The query is kept byte for byte, encoded characters and all.
    ['/api/datasources/proxy/2/q?a=1&a=2&b=%zz&c=..%2F', { kind: 'id', id: 2 }, 'q', '?a=1&a=2&b=%zz&c=..%2F'],
    ['/api/datasources/proxy/2/q?', { kind: 'id', id: 2 }, 'q', ''],
  ])('%s', (url, ref, proxyPath, search) => {
    expect(extractProxyPath(url)).toEqual({ ok: true, ref, proxyPath, search });
  });

  it.each([
    '/api/datasources/proxy/abc/x',
    '/api/datasources/proxy/1a/x',
    '/api/datasources/proxy/-1/x',
    '/api/datasources/proxy/+1/x',
    '/api/datasources/proxy/%31/x',
    '/api/datasources/proxy/1.0',
    '/api/datasources/proxy/uid',
    '/api/datasources/proxy/uid/',
    '/api/datasources/proxy/9223372036854775808/x', // int64 overflow
  ])('%s: 400 id is invalid', (url) => {
    expect(extractProxyPath(url)).toEqual({ ok: false, error: 'id-invalid', status: 400, message: 'id is invalid' });
  });

  it.each(['/api/datasources/proxy/uid/b@d/x', '/api/datasources/proxy/uid/bad$uid/x', '/api/datasources/proxy/uid/a.b', '/api/datasources/proxy/uid/%41'])(
    '%s: 400 UID is invalid',
    (url) => {
      expect(extractProxyPath(url)).toEqual({ ok: false, error: 'uid-invalid', status: 400, message: 'UID is invalid' });
    },
  );

  it('answers 404 for a valid int64 id no stored data source can have', () => {
    expect(extractProxyPath('/api/datasources/proxy/2147483647/x')).toMatchObject({ ok: true, ref: { kind: 'id', id: 2147483647 } });
    expect(extractProxyPath('/api/datasources/proxy/2147483648/x')).toEqual({ ok: false, error: 'not-found', status: 404, message: 'Unable to find datasource' });
    expect(extractProxyPath('/api/datasources/proxy/9223372036854775807')).toMatchObject({ status: 404 });
  });

  it.each(['/api/datasources/proxy', '/api/datasources/proxy/', '/api/datasources/proxy//x', '/api/datasources/1', '/api/datasources/proxyx/1', '/API/datasources/proxy/1'])(
    '%s is not a proxy route',
    (url) => {
      expect(extractProxyPath(url)).toBeNull();
    },
  );

  it('words its refusals as Grafana does', () => {
    expect(MESSAGES.proxy).toMatchObject({ idInvalid: 'id is invalid', uidInvalid: 'UID is invalid', notFound: 'Unable to find datasource' });
  });
});
