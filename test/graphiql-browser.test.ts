import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdir, readdir, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { chromium, type Browser, type Page } from 'playwright-core';
import { ADMIN, call, startTestServer, type TestServer } from './support/server.ts';

const run = promisify(execFile);
const CHROMIUM = '/usr/bin/chromium';

/** Debian's Chromium, installed once per machine (no browser downloads of Playwright's own). */
async function ensureChromium(): Promise<void> {
  if (existsSync(CHROMIUM)) return;
  const env = { ...process.env, DEBIAN_FRONTEND: 'noninteractive' };
  await run('apt-get', ['update', '-qq'], { env, timeout: 300_000, maxBuffer: 64 << 20 });
  await run('apt-get', ['install', '-y', '-qq', 'chromium'], { env, timeout: 600_000, maxBuffer: 64 << 20 });
}

/**
 * GraphiQL's page loads its script, styles and editor workers from a CDN, which this test may not
 * reach (only loopback is allowed). The same files come from the npm package the page names,
 * fetched once with npm into a cache, and the browser's CDN requests are answered from there.
 * Falls back to the newest release of the same major when the exact version is not published.
 */
async function graphiqlAssets(version: string): Promise<string> {
  const dir = join(tmpdir(), 'dashgate-graphiql-assets', version);
  const dist = join(dir, 'package', 'dist');
  if (existsSync(join(dist, 'yoga-graphiql.umd.js'))) return dist;
  await rm(dir, { recursive: true, force: true });
  await mkdir(dir, { recursive: true });
  const npm = process.env.npm_execpath ? [process.execPath, process.env.npm_execpath] : ['npm'];
  for (const spec of [`@graphql-yoga/graphiql@${version}`, `@graphql-yoga/graphiql@${version.split('.')[0]}`]) {
    try {
      await run(npm[0]!, [...npm.slice(1), 'pack', spec, '--pack-destination', dir, '--silent'], { timeout: 300_000 });
      break;
    } catch (error) {
      if (spec.endsWith(`@${version}`)) continue;
      throw error;
    }
  }
  const tarball = (await readdir(dir)).find((name) => name.endsWith('.tgz'));
  if (!tarball) throw new Error(`npm pack left no tarball of @graphql-yoga/graphiql@${version}`);
  await run('tar', ['-xzf', join(dir, tarball), '-C', dir]);
  return dist;
}

let server: TestServer;
let browser: Browser;
let assets: { version: string; dist: string };

beforeAll(async () => {
  const [started] = await Promise.all([startTestServer(), ensureChromium()]);
  server = started;
  const page = await call(server, 'GET', '/graphql', { headers: { accept: 'text/html' } });
  const version = /@graphql-yoga\/graphiql@([\w.-]+)\//.exec(page.text)?.[1];
  if (!version) throw new Error('GraphiQL page names no @graphql-yoga/graphiql version');
  assets = { version, dist: await graphiqlAssets(version) };
  browser = await chromium.launch({
    executablePath: CHROMIUM,
    args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync'],
  });
}, 900_000);

afterAll(async () => {
  await browser?.close();
  await server?.close();
});

const CONTENT_TYPES: Record<string, string> = { '.js': 'application/javascript', '.css': 'text/css' };

async function openGraphiQL(): Promise<{ page: Page; graphqlRequests: Array<{ method: string; headers: Record<string, string> }> }> {
  const context = await browser.newContext();
  const graphqlRequests: Array<{ method: string; headers: Record<string, string> }> = [];
  // Nothing leaves the machine: CDN files come from the local package, anything else remote fails.
  await context.route(/^https?:\/\//, async (route) => {
    const url = new URL(route.request().url());
    if (url.hostname === '127.0.0.1') {
      if (url.pathname === '/graphql' && route.request().resourceType() !== 'document') {
        graphqlRequests.push({ method: route.request().method(), headers: await route.request().allHeaders() });
      }
      return route.continue();
    }
    const file = url.hostname === 'unpkg.com' ? /^\/@graphql-yoga\/graphiql@[^/]+\/dist\/(.+)$/.exec(url.pathname)?.[1] : undefined;
    if (!file || file.includes('..')) return route.abort();
    const body = await readFile(join(assets.dist, file));
    return route.fulfill({ status: 200, body, headers: { 'content-type': CONTENT_TYPES[file.slice(file.lastIndexOf('.'))] ?? 'application/octet-stream', 'access-control-allow-origin': '*' } });
  });
  const page = await context.newPage();
  await page.goto(`${server.url}/graphql`);
  return { page, graphqlRequests };
}

/** Replaces a Monaco editor's whole text as a user would: focus, select all, type. */
async function replaceEditorText(page: Page, editor: string, text: string): Promise<void> {
  await page.locator(`${editor} .monaco-editor`).first().click();
  await page.keyboard.press('ControlOrMeta+A');
  await page.keyboard.insertText(text);
  // Drop whatever the editor's bracket auto-closing appended after the cursor.
  await page.keyboard.press('Shift+ControlOrMeta+End');
  await page.keyboard.press('Delete');
}

async function responseText(page: Page, containing: string): Promise<string> {
  await page.waitForFunction((needle) => document.querySelector('.graphiql-response')?.textContent?.includes(needle), containing, { timeout: 30_000 });
  // Monaco renders spaces as no-break spaces.
  return (await page.locator('.graphiql-response').innerText()).replace(/\u00a0/g, ' ');
}

describe('GraphiQL in a real browser', () => {
  it('runs a query with an Authorization header set in its headers editor', async () => {
    await call(server, 'POST', '/api/datasources', { body: { name: 'browser-prom', type: 'prometheus', access: 'proxy', url: 'http://127.0.0.1:9090' } });
    const { page, graphqlRequests } = await openGraphiQL();
    expect(await page.title()).toBe('dashgate GraphQL');
    await page.waitForSelector('.graphiql-query-editor .monaco-editor', { timeout: 60_000 });

    await replaceEditorText(page, '.graphiql-query-editor', '{ dataSources { name type } }');
    await page.locator('.graphiql-execute-button').click();
    // Without credentials the server refuses, and GraphiQL shows why.
    expect(await responseText(page, 'Unauthorized')).toContain('UNAUTHENTICATED');

    await page.locator('.graphiql-editor-tools').getByRole('button', { name: 'Headers' }).click();
    await replaceEditorText(page, '.graphiql-editor-tool .graphiql-editor:not(.hidden)', JSON.stringify({ Authorization: ADMIN }));
    await page.locator('.graphiql-execute-button').click();
    const text = await responseText(page, 'browser-prom');
    expect(text).toMatch(/"dataSources": \[\s*\{\s*"name": "browser-prom",\s*"type": "prometheus"\s*\}\s*\]/);

    // GraphiQL sent the query as a GET, with the typed header and the CSRF header it is configured with.
    const last = graphqlRequests.at(-1)!;
    expect(last.method).toBe('GET');
    expect(last.headers).toMatchObject({ authorization: ADMIN, 'x-graphql-yoga-csrf': '1' });
    await page.context().close();
  }, 120_000);
});
