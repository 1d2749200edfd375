import { describe, expect, it } from '@jest/globals';
import { anonymous } from '../../src/auth/access.ts';
import { Router } from '../../src/http/router.ts';
import { ROUTES, type Endpoint, type Method, type Route } from '../../src/http/routes.ts';

// The router's matching, table by table: which route a METHOD /path reaches and with which
// parameters. There is no 405: a path whose method has no row falls through to the next match
// (under /api the catch-all, which the front door answers 404 Not found), and null outside any.

const row = (method: Method | 'ANY', path: string, endpoint: Endpoint = 'health'): Route => ({ kind: 'endpoint', method, path, access: anonymous, endpoint });

// Parameters listed before literals and prefixes before their longer twins: order in the table never decides.
const TABLE: Route[] = [
  row('ANY', '/api/*', 'not-found'),
  row('GET', '/api/users/:id'),
  row('PUT', '/api/users/:id'),
  row('GET', '/api/users/lookup'),
  row('GET', '/api/datasources'),
  row('POST', '/api/datasources'),
  row('GET', '/api/datasources/:id'),
  row('DELETE', '/api/datasources/:id'),
  row('GET', '/api/datasources/name/:name'),
  row('GET', '/api/datasources/uid/:uid'),
  row('GET', '/api/datasources/:id/health'),
  row('ANY', '/api/datasources/proxy/:id/*', 'proxy'),
  row('ANY', '/api/datasources/proxy/uid/:uid/*', 'proxy'),
  row('GET', '/api/orgs/:orgId/users/:userId'),
];
const router = new Router(TABLE);

describe('Router.match', () => {
  it.each<[string, string, string | null, Record<string, string> | undefined]>([
    // Literal paths, any number of slashes between and after segments.
    ['GET', '/api/datasources', '/api/datasources', {}],
    ['GET', '/api/datasources/', '/api/datasources', {}],
    ['GET', '//api//datasources', '/api/datasources', {}],
    ['POST', '/api/datasources', '/api/datasources', {}],
    // Parameters: one segment each, percent-decoded.
    ['GET', '/api/datasources/7', '/api/datasources/:id', { id: '7' }],
    ['DELETE', '/api/datasources/abc', '/api/datasources/:id', { id: 'abc' }],
    ['GET', '/api/datasources/name/my%20ds', '/api/datasources/name/:name', { name: 'my ds' }],
    ['GET', '/api/datasources/name/a%2Fb', '/api/datasources/name/:name', { name: 'a/b' }],
    ['GET', '/api/datasources/name/caf%C3%A9', '/api/datasources/name/:name', { name: 'café' }],
    ['GET', '/api/orgs/2/users/9', '/api/orgs/:orgId/users/:userId', { orgId: '2', userId: '9' }],
    ['GET', '/api/datasources/7/health', '/api/datasources/:id/health', { id: '7' }],
    // A literal beats a parameter at the same position, whatever the table's order.
    ['GET', '/api/users/lookup', '/api/users/lookup', {}],
    ['PUT', '/api/users/lookup', '/api/users/:id', { id: 'lookup' }],
    ['GET', '/api/datasources/uid/x', '/api/datasources/uid/:uid', { uid: 'x' }],
    // `uid` and `name` alone are ids to the by-id route, as in the original.
    ['GET', '/api/datasources/uid', '/api/datasources/:id', { id: 'uid' }],
    // Wildcards: the rest of the path, none or more segments; the longer, more literal prefix first.
    ['GET', '/api/datasources/proxy/3', '/api/datasources/proxy/:id/*', { id: '3' }],
    ['POST', '/api/datasources/proxy/3/api/v1/query', '/api/datasources/proxy/:id/*', { id: '3' }],
    ['PATCH', '/api/datasources/proxy/uid/u1/a/b', '/api/datasources/proxy/uid/:uid/*', { uid: 'u1' }],
    ['DELETE', '/api/datasources/proxy/uid', '/api/datasources/proxy/:id/*', { id: 'uid' }],
    // A fixed-length route beats a wildcard one.
    ['GET', '/api/datasources/3/health', '/api/datasources/:id/health', { id: '3' }],
    // A method without a row of its own: the next match, here the catch-all (404), never a 405.
    ['PUT', '/api/datasources', '/api/*', {}],
    ['PATCH', '/api/datasources/7', '/api/*', {}],
    ['HEAD', '/api/users/7', '/api/*', {}],
    ['get', '/api/datasources', '/api/*', {}],
    // Malformed percent-encoding in a parameter: that route does not match.
    ['GET', '/api/datasources/name/%E0%A4%A', '/api/*', {}],
    ['GET', '/api/datasources/%zz', '/api/*', {}],
    // Paths are case-sensitive, as the original's.
    ['GET', '/API/datasources', null, undefined],
    ['GET', '/api/Datasources', '/api/*', {}],
    ['GET', '/api', '/api/*', {}],
    // Outside every row.
    ['GET', '/', null, undefined],
    ['GET', '/metrics/x', null, undefined],
  ])('%s %s -> %s', (method, path, expected, params) => {
    const match = router.match(method, path);
    expect(match && { path: match.route.path, params: match.route.method === 'ANY' || match.route.method === method ? match.params : 'wrong method' })
      .toEqual(expected === null ? null : { path: expected, params });
  });

  it('hands back the row itself', () => {
    expect(router.match('POST', '/api/datasources/proxy/1/x')?.route).toBe(TABLE.find((r) => r.path === '/api/datasources/proxy/:id/*'));
  });
});

describe('the route table', () => {
  const real = new Router(ROUTES);
  const reached = (method: string, path: string) => {
    const match = real.match(method, path);
    return match && { method: match.route.method, path: match.route.path, params: match.params };
  };

  it.each<[string, string, { method: string; path: string; params: Record<string, string> } | null]>([
    ['GET', '/api/health', { method: 'GET', path: '/api/health', params: {} }],
    ['HEAD', '/api/health', { method: 'HEAD', path: '/api/health', params: {} }],
    ['POST', '/api/ds/query', { method: 'POST', path: '/api/ds/query', params: {} }],
    ['GET', '/api/ds/query', { method: 'ANY', path: '/api/*', params: {} }],
    ['GET', '/api/users/lookup', { method: 'GET', path: '/api/users/lookup', params: {} }],
    ['GET', '/api/users/12', { method: 'GET', path: '/api/users/:id', params: { id: '12' } }],
    ['GET', '/api/org/users/lookup', { method: 'GET', path: '/api/org/users/lookup', params: {} }],
    ['PATCH', '/api/org/users/4', { method: 'PATCH', path: '/api/org/users/:userId', params: { userId: '4' } }],
    ['GET', '/api/datasources/proxy/uid/u-1/api/v1/query', { method: 'ANY', path: '/api/datasources/proxy/uid/:uid/*', params: { uid: 'u-1' } }],
    ['PUT', '/api/datasources/proxy/5/x', { method: 'ANY', path: '/api/datasources/proxy/:id/*', params: { id: '5' } }],
    ['GET', '/api/datasources/uid/u-1/resources/api/v1/labels', { method: 'ANY', path: '/api/datasources/uid/:uid/resources/*', params: { uid: 'u-1' } }],
    ['POST', '/graphql', { method: 'ANY', path: '/graphql', params: {} }],
    ['GET', '/api/no-such-thing', { method: 'ANY', path: '/api/*', params: {} }],
    ['GET', '/no-such-thing', null],
  ])('%s %s', (method, path, expected) => {
    expect(reached(method, path)).toEqual(expected);
  });

  it('has no two rows for one method and path', () => {
    const keys = ROUTES.map((r) => `${r.method} ${r.path.replace(/:[^/]+/g, ':')}`);
    expect(keys.filter((key, i) => keys.indexOf(key) !== i)).toEqual([]);
  });
});
