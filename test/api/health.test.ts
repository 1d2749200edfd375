import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { COMMIT } from '../../src/version.ts';
import { call, startTestServer, type TestServer } from '../support/server.ts';

const root = new URL('../..', import.meta.url).pathname;
let server: TestServer;

beforeAll(async () => {
  server = await startTestServer();
});
afterAll(() => server.close());

describe('GET /api/health', () => {
  it('reports the database, the original\'s release spoken here and the commit, before any authentication', async () => {
    for (const auth of [null, 'Basic bm90OnZhbGlk', 'Bearer not-a-token']) {
      const res = await call(server, 'GET', '/api/health', { auth });
      expect(res.status).toBe(200);
      expect(res.body).toEqual({ database: 'ok', version: '12.0.0', commit: COMMIT });
      expect(Object.keys(res.body)).toEqual(['database', 'version', 'commit']);
    }
  });

  it('is written as the original writes it: indented by two spaces, its content type saying UTF-8', async () => {
    const res = await fetch(`${server.url}/api/health`);
    expect(res.headers.get('content-type')).toBe('application/json; charset=UTF-8');
    expect(await res.text()).toBe(`{\n  "database": "ok",\n  "version": "12.0.0",\n  "commit": "${COMMIT}"\n}`);
  });

  it('says the same version as buildInfo.version, and keeps dashgate\'s own in versionString and the metrics', async () => {
    const own = (JSON.parse(readFileSync(`${root}package.json`, 'utf8')) as { version: string }).version;
    const check = async (target: TestServer, expected: string) => {
      const health = await call(target, 'GET', '/api/health', { auth: null });
      const { buildInfo } = (await call(target, 'GET', '/api/frontend/settings')).body;
      expect([health.body.version, buildInfo.version]).toEqual([expected, expected]);
      expect(buildInfo.versionString).toBe(`dashgate v${own} (${COMMIT.slice(0, 10)})`);
      // Clients parse it as three numbers (the Ansible collection's `major, minor, rev = version.split(".")`).
      expect(health.body.version.split('.').map(Number).every(Number.isInteger)).toBe(true);
      const metrics = await fetch(`${target.url}/metrics`).then((r) => r.text());
      expect(metrics).toContain(`dashgate_build_info{version="${own}",commit="${COMMIT}"} 1`);
    };
    await check(server, '12.0.0');
    const older = await startTestServer({ overrides: { server: { compatible_version: '10.4.3' } } });
    try {
      await check(older, '10.4.3');
    } finally {
      await older.close();
    }
  });

  it('names a real commit of this checkout (or "unknown" outside one)', () => {
    if (COMMIT === 'unknown') return expect(() => execFileSync('git', ['rev-parse', 'HEAD'], { cwd: root, stdio: 'pipe' })).toThrow();
    expect(COMMIT).toMatch(/^[0-9a-f]{40}$/);
    expect(execFileSync('git', ['cat-file', '-t', COMMIT], { cwd: root }).toString().trim()).toBe('commit');
  });

  it('answers HEAD without a body; other methods are not the health check', async () => {
    const head = await fetch(`${server.url}/api/health`, { method: 'HEAD' });
    expect(head.status).toBe(200);
    expect(await head.text()).toBe('');
    // The headers of the GET's answer, as the original's HEAD: the length is that of the body with
    // the same version (a probe reading only HEAD sees the same answer a GET would give).
    const get = await fetch(`${server.url}/api/health`);
    const body = await get.text();
    expect(JSON.parse(body)).toMatchObject({ version: '12.0.0' });
    expect([head.headers.get('content-type'), head.headers.get('content-length')]).toEqual([get.headers.get('content-type'), String(Buffer.byteLength(body))]);
    expect(head.headers.get('content-type')).toMatch(/^application\/json/);
    const post = await call(server, 'POST', '/api/health', { auth: null });
    expect(post.status).toBe(401); // an unknown route to an anonymous caller, as in the original
  });
});
