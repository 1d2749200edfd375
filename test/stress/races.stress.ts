import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { ADMIN, call, startTestServer, type TestServer } from '../support/server.ts';
import { createDataSource } from '../robustness/helpers.ts';

/** The fast suite's races, bigger, with the writers spread over two instances. */
let a: TestServer;
let b: TestServer;

beforeAll(async () => {
  a = await startTestServer({ overrides: { database: { max_open_conn: '20' } } });
  b = await startTestServer({ connection: a.connection, overrides: { database: { max_open_conn: '20' } } });
});
afterAll(async () => {
  await b.close();
  await a.close();
});

const base = { type: 'loki', access: 'proxy' };
const either = (i: number) => (i % 2 ? a : b);

function tally(statuses: number[]): Record<number, number> {
  const counts: Record<number, number> = {};
  for (const s of statuses) counts[s] = (counts[s] ?? 0) + 1;
  return counts;
}

describe('races across two instances', () => {
  it('200 PUTs with one version: one winner', async () => {
    for (let round = 0; round < 3; round++) {
      const ds = await createDataSource(a, ADMIN, { name: `versioned-${round}` });
      const replies = await Promise.all(Array.from({ length: 200 }, (_, i) =>
        call(either(i), 'PUT', `/api/datasources/${ds.id}`, { body: { ...base, name: `versioned-${round}`, url: `http://w${i}.example`, version: 1 } })));
      expect(tally(replies.map((r) => r.status))).toEqual({ 200: 1, 409: 199 });
    }
  });

  it('200 creates of one name: one data source', async () => {
    const replies = await Promise.all(Array.from({ length: 200 }, (_, i) => call(either(i), 'POST', '/api/datasources', { body: { ...base, name: 'one-of-200' } })));
    expect(tally(replies.map((r) => r.status))).toEqual({ 200: 1, 409: 199 });
  });

  it('100 deletes of one data source: one 200', async () => {
    for (const by of ['id', 'uid', 'name'] as const) {
      const ds = await createDataSource(a, ADMIN, { name: `doomed-${by}` });
      const path = by === 'id' ? `/api/datasources/${ds.id}` : by === 'uid' ? `/api/datasources/uid/${ds.uid}` : `/api/datasources/name/${ds.name}`;
      const replies = await Promise.all(Array.from({ length: 100 }, (_, i) => call(either(i), 'DELETE', path)));
      expect([by, tally(replies.map((r) => r.status))]).toEqual([by, { 200: 1, 404: 99 }]);
    }
  });

  it('50 "make default" updates, five times over: always exactly one default', async () => {
    const sources = [];
    for (let i = 0; i < 50; i++) sources.push(await createDataSource(a, ADMIN, { name: `candidate-${i}` }));
    for (let round = 0; round < 5; round++) {
      const replies = await Promise.all(sources.map((ds, i) => call(either(i + round), 'PUT', `/api/datasources/${ds.id}`, { body: { ...base, name: ds.name, isDefault: true } })));
      expect(tally(replies.map((r) => r.status))).toEqual({ 200: 50 });
      expect(await a.sql('select id from data_source where org_id = 1 and is_default')).toHaveLength(1);
    }
  });

  it('100 API keys of one name: one key', async () => {
    const replies = await Promise.all(Array.from({ length: 100 }, (_, i) => call(either(i), 'POST', '/api/auth/keys', { body: { name: 'contended-key', role: 'Viewer' } })));
    expect(tally(replies.map((r) => r.status))).toEqual({ 200: 1, 409: 99 });
  });
});
