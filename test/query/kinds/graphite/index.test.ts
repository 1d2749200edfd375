import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { graphiteKind } from '../../../../src/query/kinds/graphite/index.ts';
import { dataQuery, directContext } from '../../../support/kind-context.ts';
import { startGraphite, type Graphite } from '../../../support/graphite.ts';
import { startUpstream } from '../../../support/upstream.ts';

// Graphite through its kind against Debian's carbon-cache and graphite-web, with data the test sends.
const NOW = Math.floor(Date.now() / 10_000) * 10;
const RANGE = { from: (NOW - 600) * 1000, to: NOW * 1000 };
let graphite: Graphite | undefined;

beforeAll(async () => {
  graphite = await startGraphite();
  if (!graphite) return;
  const points: [string, number, number][] = [];
  for (let i = 1; i <= 6; i++) {
    points.push(['servers.web1.cpu', i, NOW - 600 + i * 60]);
    points.push(['servers.web2.cpu', 10 * i, NOW - 600 + i * 60]);
  }
  points.push(['servers.db1.disk', 42, NOW - 300]);
  await graphite.send(points);
}, 120_000);

afterAll(async () => {
  await graphite?.close();
});

const whenInstalled = (name: string, fn: () => Promise<void>) => it(name, async () => {
  if (graphite) await fn();
}, 30_000);

describe('Graphite kind against a real graphite-web', () => {
  whenInstalled('renders one frame per series for its refId, named by the target', async () => {
    const ctx = directContext(graphite!.url, { type: 'graphite' });
    const results = await graphiteKind.query(ctx, [dataQuery('A', { target: 'servers.*.cpu' }, RANGE, { maxDataPoints: 1000 })]);
    const frames = results.get('A')?.frames ?? [];
    expect(frames.map((f) => [f.refId, f.fields[1].config?.displayNameFromDS, f.fields[1].labels])).toEqual([
      ['A', 'servers.web1.cpu', { name: 'servers.web1.cpu' }],
      ['A', 'servers.web2.cpu', { name: 'servers.web2.cpu' }],
    ]);
    const [time, value] = frames[1].fields;
    const points = time.values.map((t, i) => [t, value.values[i]]).filter(([, v]) => v !== null);
    expect(points).toEqual([1, 2, 3, 4, 5, 6].map((i) => [(NOW - 600 + i * 60) * 1000, 10 * i]));
    expect(ctx.calls[0]).toMatchObject({ method: 'POST', path: 'render' });
    expect(ctx.calls[0].body).toBe(`format=json&from=${NOW - 600}&maxDataPoints=1000&target=servers.%2A.cpu&until=${NOW}`);
  });

  whenInstalled('rewrites 5m for graphite and runs targetFull, refIds without a target skipped', async () => {
    const ctx = directContext(graphite!.url);
    const results = await graphiteKind.query(ctx, [
      dataQuery('A', { target: 'x', targetFull: "summarize(sumSeries(servers.*.cpu), '5m', 'sum')" }, RANGE),
      dataQuery('B', { target: '' }, RANGE),
    ]);
    expect([...results.keys()]).toEqual(['A']);
    const frame = results.get('A')!.frames![0];
    // graphite-web names the series after the target it parsed (its own quotes).
    expect(frame.fields[1].config?.displayNameFromDS).toBe('summarize(sumSeries(servers.*.cpu), "5min", "sum")');
    expect(ctx.calls[0].body).toContain(`target=${encodeURIComponent("summarize(sumSeries(servers.*.cpu), '5min', 'sum')").replace(/[!'()*]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`).replace(/%20/g, '+')}`);
    const sum = (frame.fields[1].values as (number | null)[]).reduce<number>((s, v) => s + (v ?? 0), 0);
    expect(sum).toBe(231);
  });

  whenInstalled('says graphite-web\'s error on the refId', async () => {
    const results = await graphiteKind.query(directContext(graphite!.url), [dataQuery('A', { target: 'noSuchFunction(servers.*.cpu)' }, RANGE)]);
    expect(results.get('A')).toMatchObject({ errorSource: 'downstream', status: 400 });
    expect(results.get('A')?.error).toMatch(/^request failed with error: .*noSuchFunction/);
  });

  whenInstalled('finds and expands the metric tree, lists events', async () => {
    const ctx = directContext(graphite!.url);
    const post = (path: string, body: unknown) => graphiteKind.resource!(ctx, { method: 'POST', path, query: '', headers: {}, body: Buffer.from(JSON.stringify(body)) });
    const found = await post('metrics/find', { query: 'servers.*', from: String(NOW - 3600), until: String(NOW) });
    expect([found.status, JSON.parse(found.body.toString())]).toEqual([200, [
      { text: 'db1', id: 'servers.db1', allowChildren: 1, expandable: 1, leaf: 0 },
      { text: 'web1', id: 'servers.web1', allowChildren: 1, expandable: 1, leaf: 0 },
      { text: 'web2', id: 'servers.web2', allowChildren: 1, expandable: 1, leaf: 0 },
    ]]);
    const leaves = await post('metrics/find', { query: 'servers.web1.*' });
    expect(JSON.parse(leaves.body.toString())).toEqual([{ text: 'cpu', id: 'servers.web1.cpu', allowChildren: 0, expandable: 0, leaf: 1 }]);
    const expanded = await post('metrics/expand', { query: 'servers.*.cpu' });
    expect([expanded.status, JSON.parse(expanded.body.toString())]).toEqual([200, [{ text: 'servers.web1.cpu' }, { text: 'servers.web2.cpu' }]]);
    const events = await post('events', { from: '-1d', until: 'now' });
    expect([events.status, JSON.parse(events.body.toString())]).toEqual([200, { data: [] }]);
  });

  whenInstalled('passes the functions list through, status and all', async () => {
    const res = await graphiteKind.resource!(directContext(graphite!.url), { method: 'GET', path: 'functions', query: '', headers: {}, body: Buffer.alloc(0) });
    // Whatever graphite-web itself answers (Debian's 1.1.8 on Python 3.11 fails this endpoint, as
    // inspect.getargspec is gone; others list the functions), the kind answers the same.
    const direct = await fetch(`${graphite!.url}/functions`);
    expect([res.status, res.headers['content-type'], JSON.parse(res.body.toString())]).toEqual([direct.status, 'application/json', await direct.json()]);
  });
});

describe('Graphite functions resource', () => {
  it.each([[200, '{"sum":{"name":"sum"}}'], [500, '{"error":"internal"}'], [404, '[]']])('passes status %i and the body through as they came', async (status, body) => {
    const upstream = await startUpstream((_req, res) => {
      res.writeHead(status, { 'content-type': 'text/plain' });
      res.end(body);
    });
    try {
      const res = await graphiteKind.resource!(directContext(upstream.url), { method: 'GET', path: 'functions/', query: 'x=1', headers: {}, body: Buffer.alloc(0) });
      expect([res.status, res.headers, res.body.toString()]).toEqual([status, { 'content-type': 'application/json' }, body]);
      expect(upstream.requests.map((r) => [r.method, r.url])).toEqual([['GET', '/functions']]);
    } finally {
      await upstream.close();
    }
  });
});

describe('Graphite kind without a reachable Graphite', () => {
  const ctx = () => directContext('http://127.0.0.1:1');
  const post = (path: string, body: string) => graphiteKind.resource!(ctx(), { method: 'POST', path, query: '', headers: {}, body: Buffer.from(body) });

  it('answers refId A when no query has a target, as the original', async () => {
    const results = await graphiteKind.query(ctx(), [dataQuery('X', {}, RANGE), dataQuery('Y', { target: '' }, RANGE)]);
    expect([...results.entries()]).toEqual([['A', { error: 'no query target found', errorSource: 'downstream', status: 400 }]]);
  });

  it('answers each refId with the call\'s failure', async () => {
    const results = await graphiteKind.query(ctx(), [dataQuery('A', { target: 'a.b' }, RANGE)]);
    expect(results.get('A')).toMatchObject({ errorSource: 'downstream', status: 502 });
  });

  it.each([
    ['metrics/find', '{}', 400, 'failed to handle resource request: query is required'],
    ['metrics/expand', '{"query":""}', 400, 'failed to handle resource request: query is required'],
    ['metrics/find', 'not json', 400, 'failed to parse request body: the body must be a JSON object'],
  ])('refuses %s with %s', async (path, body, status, message) => {
    const res = await post(path, body);
    expect([res.status, JSON.parse(res.body.toString())]).toEqual([status, { error: message, message }]);
  });

  it('answers other paths 404', async () => {
    const res = await post('render', '{}');
    expect([res.status, JSON.parse(res.body.toString())]).toEqual([404, { message: 'Not found' }]);
  });
});

describe('Graphite kind against a hostile upstream', () => {
  const deep = `[{"text":${'['.repeat(100_000)}${']'.repeat(100_000)}}]`;
  const answers: Record<string, string> = {
    '/metrics/find': deep,
    '/metrics/expand': `{"results":[${'['.repeat(100_000)}${']'.repeat(100_000)}]}`,
    '/events/get_data': '[{"what":"x","data":{"a":1},"tags":["t"]}]',
    '/render': '[{"target":"a","datapoints":[[1,1e306]]}]',
  };

  it('answers deeply nested and out-of-range answers with clear errors, never the engine\'s', async () => {
    const upstream = await startUpstream((req, res) => {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(answers[(req.url ?? '').split('?')[0]!] ?? '[]');
    });
    try {
      const ctx = directContext(upstream.url);
      const post = (path: string, body: string) => graphiteKind.resource!(ctx, { method: 'POST', path, query: '', headers: {}, body: Buffer.from(body) });
      const find = await post('metrics/find', '{"query":"*"}');
      expect([find.status, JSON.parse(find.body.toString()).message]).toEqual([500,
        'failed to handle resource request: metrics find request failed: failed to parse metrics find response: the answer nests deeper than 64 levels']);
      const expand = await post('metrics/expand', '{"query":"*"}');
      expect(JSON.parse(expand.body.toString()).message).toMatch(/nests deeper than 64 levels$/);
      const events = await post('events', '{}');
      expect(JSON.parse(events.body.toString())).toEqual({ data: [{ what: 'x', data: { a: 1 }, tags: ['t'] }] });
      const results = await graphiteKind.query(ctx, [dataQuery('A', { target: 'a' }, RANGE)]);
      expect(results.get('A')).toEqual({ error: 'a data point timestamp is out of range', errorSource: 'downstream', status: 502 });
    } finally {
      await upstream.close();
    }
  });
});
