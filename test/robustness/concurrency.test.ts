import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { ADMIN, call, startTestServer, type TestServer } from '../support/server.ts';
import { createDataSource } from './helpers.ts';

let server: TestServer;

beforeAll(async () => {
  server = await startTestServer();
});
afterAll(() => server.close());

const base = { type: 'loki', access: 'proxy' };

/** How many answers had each status, e.g. { 200: 1, 409: 49 }. */
function tally(statuses: number[]): Record<number, number> {
  const counts: Record<number, number> = {};
  for (const s of statuses) counts[s] = (counts[s] ?? 0) + 1;
  return counts;
}

describe('racing writers', () => {
  it('50 concurrent PUTs with the same version: exactly one wins, 49 get 409', async () => {
    const ds = await createDataSource(server, ADMIN, { name: 'versioned' });
    const replies = await Promise.all(Array.from({ length: 50 }, (_, i) =>
      call(server, 'PUT', `/api/datasources/${ds.id}`, { body: { ...base, name: 'versioned', url: `http://writer-${i}.example`, version: 1 } })));
    expect(tally(replies.map((r) => r.status))).toEqual({ 200: 1, 409: 49 });
    for (const lost of replies.filter((r) => r.status === 409)) {
      expect(lost.body).toEqual({ message: 'Datasource has already been updated by someone else. Please reload and try again' });
    }
    // The stored row is the winner's, at version 2.
    const winner = replies.find((r) => r.status === 200)!;
    const stored = await call(server, 'GET', `/api/datasources/${ds.id}`);
    expect(stored.body).toMatchObject({ version: 2, url: winner.body.datasource.url });
  });

  it('50 concurrent creates of one name: one 200, 49 409s, no 500', async () => {
    const replies = await Promise.all(Array.from({ length: 50 }, () => call(server, 'POST', '/api/datasources', { body: { ...base, name: 'same-name' } })));
    expect(tally(replies.map((r) => r.status))).toEqual({ 200: 1, 409: 49 });
    for (const lost of replies.filter((r) => r.status === 409)) expect(lost.body).toEqual({ message: 'data source with the same name already exists' });
    const [{ n }] = await server.sql<{ n: number }>(`select count(*)::int as n from data_source where name = 'same-name'`);
    expect(n).toBe(1);
  });

  it('20 concurrent "make default" updates leave exactly one default', async () => {
    const sources = [];
    for (let i = 0; i < 20; i++) sources.push(await createDataSource(server, ADMIN, { name: `candidate-${i}` }));
    const replies = await Promise.all(sources.map((ds) => call(server, 'PUT', `/api/datasources/${ds.id}`, { body: { ...base, name: ds.name, isDefault: true } })));
    expect(tally(replies.map((r) => r.status))).toEqual({ 200: 20 });
    const defaults = await server.sql<{ id: number }>('select id from data_source where org_id = 1 and is_default');
    expect(defaults).toHaveLength(1);
    // The survivor is whichever write committed last; the API agrees with the table.
    const listed = (await call(server, 'GET', '/api/datasources')).body.filter((d: { isDefault: boolean }) => d.isDefault);
    expect(listed.map((d: { id: number }) => d.id)).toEqual([defaults[0]!.id]);

    // Creating with isDefault concurrently keeps the invariant too.
    await Promise.all(Array.from({ length: 10 }, (_, i) => call(server, 'POST', '/api/datasources', { body: { ...base, name: `new-default-${i}`, isDefault: true } })));
    expect(await server.sql('select id from data_source where org_id = 1 and is_default')).toHaveLength(1);
  });

  it('10 concurrent deletes of one data source: one 200, nine 404s', async () => {
    for (const by of ['id', 'uid', 'name'] as const) {
      const ds = await createDataSource(server, ADMIN, { name: `doomed-by-${by}` });
      const path = by === 'id' ? `/api/datasources/${ds.id}` : by === 'uid' ? `/api/datasources/uid/${ds.uid}` : `/api/datasources/name/${ds.name}`;
      const replies = await Promise.all(Array.from({ length: 10 }, () => call(server, 'DELETE', path)));
      expect([by, tally(replies.map((r) => r.status))]).toEqual([by, { 200: 1, 404: 9 }]);
      for (const lost of replies.filter((r) => r.status === 404)) expect(lost.body).toEqual({ message: 'Data source not found' });
    }
  });
});
