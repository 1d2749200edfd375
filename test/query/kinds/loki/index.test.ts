import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { MESSAGES } from '../../../../src/errors/messages.ts';
import { lokiKind } from '../../../../src/query/kinds/loki/index.ts';
import { dataQuery, directContext } from '../../../support/kind-context.ts';
import { startLokiStandIn } from '../../../support/loki.ts';
import type { Upstream } from '../../../support/upstream.ts';

// Loki through its kind against a stand-in replaying Loki's recorded answers over real HTTP.
const RANGE = { from: 1700000000000, to: 1700000300000 };
let loki: Upstream;

beforeAll(async () => {
  loki = await startLokiStandIn();
});
afterAll(async () => {
  await loki.close();
});

describe('Loki kind', () => {
  it('answers a log query (as grafana-client smartquery posts it) with one log frame', async () => {
    const ctx = directContext(loki.url, { type: 'loki' });
    const results = await lokiKind.query(ctx, [dataQuery('A', { expr: '{job="varlogs"}', queryType: 'range', maxLines: 1000, resolution: 1 }, RANGE)]);
    const a = results.get('A');
    expect(a?.error).toBeUndefined();
    expect(a?.frames).toHaveLength(1);
    expect(a?.frames?.[0].fields.map((f) => f.name)).toEqual(['labels', 'Time', 'Line', 'tsNs', 'id']);
    expect(loki.requests.at(-1)?.url).toBe('/loki/api/v1/query_range?direction=backward&end=1700000300000000000&limit=1000&query=%7Bjob%3D%22varlogs%22%7D&start=1700000000000000000&step=1000ms');
  });

  it('answers metric and instant queries with time series frames, several refIds at once', async () => {
    const ctx = directContext(loki.url);
    const results = await lokiKind.query(ctx, [
      dataQuery('M', { expr: 'rate({job="varlogs"}[$__interval])', legendFormat: '{{level}}' }, RANGE, { intervalMs: 15000 }),
      dataQuery('I', { expr: 'count_over_time({job="varlogs"}[5m])', queryType: 'instant' }, RANGE),
      dataQuery('E', { expr: '{job="nothing"}' }, RANGE),
    ]);
    expect(results.get('M')?.frames?.map((f) => f.name)).toEqual(['error', 'info']);
    expect(results.get('M')?.frames?.[0].meta?.executedQueryString).toBe('Expr: rate({job="varlogs"}[15s])\nStep: 15s');
    expect(results.get('I')?.frames?.map((f) => f.name)).toEqual(['{level="error"}', '{}']);
    expect(results.get('E')).toEqual({ frames: [] });
  });

  it.each([
    ['bad query', 'parse error at line 1, col 1: syntax error: unexpected IDENTIFIER\n', 400],
    ['{a="too_many"}', 'max entries limit per query exceeded, limit > max_entries_limit (5001 > 5000)', 400],
    ['{a="crash"}', 'internal error: boom', 500],
  ])('says Loki\'s error for %s on the refId', async (expr, error, status) => {
    const results = await lokiKind.query(directContext(loki.url), [dataQuery('A', { expr }, RANGE), dataQuery('B', { expr: '{job="x"}' }, RANGE)]);
    expect(results.get('A')).toEqual({ error, errorSource: 'downstream', status });
    expect(results.get('B')?.frames).toHaveLength(1);
  });

  it('fails one refId for a bad model, and every refId on an unreachable Loki, as answers', async () => {
    const bad = await lokiKind.query(directContext(loki.url), [dataQuery('A', { expr: 'x', queryType: 'stream' }, RANGE)]);
    expect(bad.get('A')).toEqual({ error: 'invalid queryType: stream', errorSource: 'plugin', status: 400 });
    const down = await lokiKind.query(directContext('http://127.0.0.1:1'), [dataQuery('A', { expr: '{a="b"}' }, RANGE)]);
    expect(down.get('A')).toMatchObject({ errorSource: 'downstream', status: 502 });
  });

  it('fails a refId past the point limit', async () => {
    const results = await lokiKind.query(directContext(loki.url, {}, 10), [dataQuery('A', { expr: '{job="varlogs"}' }, RANGE)]);
    expect(results.get('A')).toEqual({ error: MESSAGES.query.tooManyPoints(10), errorSource: 'plugin', status: 400 });
  });
});

describe('Loki resources', () => {
  const get = (path: string, query = '', method = 'GET') =>
    lokiKind.resource!(directContext(loki.url), { method, path, query, headers: {}, body: Buffer.alloc(0) });

  it.each([
    ['labels', 'start=1&end=2', '{ "status": "success", "data": ["filename", "job", "level"] }\n'],
    ['label/job/values', 'start=1', '{ "status": "success", "data": ["varlogs", "systemd"] }\n'],
  ])('forwards %s?%s to /loki/api/v1/', async (path, query, body) => {
    const res = await get(path, query);
    expect(res.status).toBe(200);
    expect(res.headers['content-type']).toBe('application/json');
    expect(res.body.toString()).toBe(body);
    expect(loki.requests.at(-1)?.url).toBe(`/loki/api/v1/${path}?${query}`);
  });

  it('answers Loki\'s client errors with its message, hides its server errors', async () => {
    const res = await get('index/stats', 'query=');
    expect([res.status, JSON.parse(res.body.toString())]).toEqual([400, { message: 'query is required' }]);
    const hidden = await get('series', 'match[]=crash');
    expect([hidden.status, JSON.parse(hidden.body.toString())]).toEqual([502, { message: 'Failed to call resource' }]);
  });

  it.each([
    ['POST', 'labels', 'a=1', 405, 'invalid HTTP method: POST'],
    ['GET', 'query_range', 'query=x', 400, 'invalid URL: query_range?query=x'],
    ['GET', 'labels', '', 400, 'invalid URL: labels'],
    ['GET', 'label/../../../../etc', 'x=1', 400, 'invalid URL: label/../../../../etc?x=1'],
  ])('refuses %s %s?%s', async (method, path, query, status, message) => {
    const before = loki.requests.length;
    const res = await get(path, query, method);
    expect([res.status, JSON.parse(res.body.toString())]).toEqual([status, { message }]);
    expect(loki.requests.length).toBe(before);
  });
});
