import { mkdir, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type { Browser } from 'playwright-core';
import { buildPage } from '../../examples/typed-client/page/build.ts';
import { servePage, type PageServer } from '../../examples/typed-client/page/serve.ts';
import { launchChromium } from '../support/chromium.ts';
import { call, startTestServer, type TestServer } from '../support/server.ts';

const root = fileURLToPath(new URL('../..', import.meta.url));
/** Kept after the run, for a person to look at. */
const SCREENSHOT = join(root, 'test-results', 'live-page.png');

let server: TestServer;
let page: PageServer;
let browser: Browser;
let built: string;

beforeAll(async () => {
  built = await mkdtemp(join(tmpdir(), 'dashgate-page-'));
  // The page sends hashes only, and the server runs nothing but the manifest the example generated.
  const [started, launched] = await Promise.all([
    startTestServer({ overrides: { graphql: { trusted_documents: 'only', trusted_documents_path: join(root, 'examples/typed-client/src/gql') } } }),
    launchChromium(),
    buildPage({ outdir: built, persisted: true }),
  ]);
  server = started;
  browser = launched;
  page = await servePage(built, server.url);
}, 900_000);

afterAll(async () => {
  await browser?.close();
  await page?.close();
  await server?.close();
  await rm(built, { recursive: true, force: true });
});

describe('the live page (examples/typed-client/page)', () => {
  it('lists, creates and edits data sources, and follows changes made elsewhere without a reload', async () => {
    const sa = await call(server, 'POST', '/api/serviceaccounts', { body: { name: 'page', role: 'Admin' } });
    const token = (await call(server, 'POST', `/api/serviceaccounts/${sa.body.id}/tokens`, { body: { name: 'page-token' } })).body.key as string;
    await call(server, 'POST', '/api/datasources', { body: { name: 'already-there', type: 'loki', access: 'proxy', url: 'http://loki:3100' } });
    await call(server, 'POST', '/api/datasources', { body: { name: 'a-random-walk', type: 'grafana-testdata-datasource', access: 'proxy' } });

    const context = await browser.newContext({ viewport: { width: 1000, height: 560 } });
    const external: string[] = [];
    const graphqlBodies: string[] = [];
    await context.route(/^https?:\/\//, async (route) => {
      const url = new URL(route.request().url());
      if (url.hostname !== '127.0.0.1') {
        external.push(url.href);
        return route.abort();
      }
      if (url.pathname === '/graphql') graphqlBodies.push(route.request().postData() ?? '');
      return route.continue();
    });
    const tab = await context.newPage();
    const errors: string[] = [];
    tab.on('pageerror', (error) => errors.push(error.message));
    await tab.goto(page.url);
    await tab.locator('input[name=token]').fill(token);
    await tab.locator('#sign-in button').click();
    await tab.locator('#live.on').waitFor({ timeout: 30_000 });
    await tab.locator('tr[data-uid]', { hasText: 'already-there' }).waitFor();
    await tab.locator('#alerts', { hasText: 'alerts: active' }).waitFor();

    // The chart: a TestData random walk kept current by the liveQuery subscription, drawn by uPlot,
    // redrawn at each refresh, with the viewers sharing it and the time of the last refresh.
    await tab.locator('#chart canvas').waitFor({ timeout: 10_000 });
    await tab.locator('#chart-title', { hasText: 'a-random-walk: A-series' }).waitFor();
    await tab.locator('#chart-status', { hasText: /^60 points, updated [2-9] times; 1 viewer, last refresh \d\d:\d\d:\d\d$/ }).waitFor({ timeout: 10_000 });
    expect(server.app.liveQueries.subscribers).toBe(1);

    // Created through REST: the row appears by itself.
    const created = await call(server, 'POST', '/api/datasources', { body: { name: 'from-rest', type: 'prometheus', access: 'proxy', url: 'http://prometheus:9090' } });
    expect(created.status).toBe(200);
    const row = tab.locator(`tr[data-uid="${created.body.datasource.uid}"]`);
    await row.waitFor({ timeout: 5000 });
    expect(await row.innerText()).toContain('from-rest');
    expect(await row.innerText()).toContain('http://prometheus:9090');

    // Added on the page through the typed mutation.
    await tab.locator('#create input[name=name]').fill('from-page');
    await tab.locator('#create select[name=type]').selectOption('graphite');
    await tab.locator('#create input[name=url]').fill('http://graphite:8080');
    await tab.locator('#create button').click();
    await tab.locator('tr[data-uid]', { hasText: 'from-page' }).waitFor({ timeout: 5000 });
    expect((await call(server, 'GET', '/api/datasources/name/from-page')).body).toMatchObject({ type: 'graphite', url: 'http://graphite:8080' });

    // Edited on the page: REST sees it, the row shows the new version.
    await row.getByRole('button', { name: 'Edit' }).click();
    await row.locator('input[name=url]').fill('http://prometheus-2:9090');
    await row.getByRole('button', { name: 'Save' }).click();
    await tab.locator('tr[data-uid]', { hasText: 'http://prometheus-2:9090' }).waitFor({ timeout: 5000 });
    const read = await call(server, 'GET', `/api/datasources/uid/${created.body.datasource.uid}`);
    expect(read.body).toMatchObject({ name: 'from-rest', url: 'http://prometheus-2:9090', version: 2 });

    // Deleted elsewhere: the row goes away; the pause switch shows too.
    await call(server, 'DELETE', '/api/datasources/name/already-there');
    await tab.locator('tr[data-uid]', { hasText: 'already-there' }).waitFor({ state: 'detached', timeout: 5000 });
    await call(server, 'POST', '/api/admin/pause-all-alerts', { body: { paused: true } });
    await tab.locator('#alerts', { hasText: 'alerts: paused' }).waitFor({ timeout: 5000 });

    await mkdir(join(root, 'test-results'), { recursive: true });
    await tab.screenshot({ path: SCREENSHOT, fullPage: true });
    expect(errors).toEqual([]);
    expect(external).toEqual([]);
    // Only hashes went out: the server accepts nothing else.
    expect(graphqlBodies.length).toBeGreaterThan(0);
    for (const body of graphqlBodies) expect(JSON.parse(body)).not.toHaveProperty('query');
    await context.close();
  }, 120_000);
});
