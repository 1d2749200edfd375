import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type { Browser, Page } from 'playwright-core';
import { launchChromium } from '../support/chromium.ts';
import { ADMIN, call, startTestServer, type TestServer } from '../support/server.ts';

let server: TestServer;
let browser: Browser;

beforeAll(async () => {
  const [started, launched] = await Promise.all([startTestServer(), launchChromium()]);
  server = started;
  browser = launched;
}, 900_000);

afterAll(async () => {
  await browser?.close();
  await server?.close();
});

interface OpenedGraphiQL {
  page: Page;
  graphqlRequests: Array<{ method: string; headers: Record<string, string> }>;
  /** Requests that tried to leave loopback (a CDN, say); refused, and expected to be none. */
  external: string[];
}

async function openGraphiQL(): Promise<OpenedGraphiQL> {
  const context = await browser.newContext();
  const graphqlRequests: OpenedGraphiQL['graphqlRequests'] = [];
  const external: string[] = [];
  // The server hosts GraphiQL whole, so nothing may leave the machine.
  await context.route(/^https?:\/\//, async (route) => {
    const url = new URL(route.request().url());
    if (url.hostname !== '127.0.0.1') {
      external.push(url.href);
      return route.abort();
    }
    if (url.pathname === '/graphql' && route.request().resourceType() !== 'document') {
      graphqlRequests.push({ method: route.request().method(), headers: await route.request().allHeaders() });
    }
    return route.continue();
  });
  const page = await context.newPage();
  await page.goto(`${server.url}/graphql`);
  return { page, graphqlRequests, external };
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

/**
 * Runs the editor's operation and waits for a response containing `needle`. Under a loaded CI
 * machine the editors commit their text after a debounce, so a click can run the previous text;
 * like a user, it clicks again until the answer it expects shows (or 90 s pass).
 */
async function runAndRead(page: Page, needle: string): Promise<string> {
  const deadline = Date.now() + 90_000;
  for (;;) {
    await page.locator('.graphiql-execute-button').click();
    try {
      await page.waitForFunction((text) => document.querySelector('.graphiql-response')?.textContent?.includes(text), needle, { timeout: 10_000 });
      break;
    } catch (error) {
      if (Date.now() > deadline) throw error;
    }
  }
  // Monaco renders spaces as no-break spaces.
  return (await page.locator('.graphiql-response').innerText()).replace(/\u00a0/g, ' ');
}

describe('GraphiQL in a real browser', () => {
  it('runs a query with an Authorization header set in its headers editor', async () => {
    await call(server, 'POST', '/api/datasources', { body: { name: 'browser-prom', type: 'prometheus', access: 'proxy', url: 'http://127.0.0.1:9090' } });
    const { page, graphqlRequests, external } = await openGraphiQL();
    expect(await page.title()).toBe('dashgate GraphQL');
    await page.waitForSelector('.graphiql-query-editor .monaco-editor', { timeout: 60_000 });

    await replaceEditorText(page, '.graphiql-query-editor', '{ currentOrganization { dataSources { nodes { name type } } } }');
    // Without credentials the server refuses, and GraphiQL shows why.
    expect(await runAndRead(page, 'Unauthorized')).toContain('UNAUTHENTICATED');

    await page.locator('.graphiql-editor-tools').getByRole('button', { name: 'Headers' }).click();
    await replaceEditorText(page, '.graphiql-editor-tool .graphiql-editor:not(.hidden)', JSON.stringify({ Authorization: ADMIN }));
    const text = await runAndRead(page, 'browser-prom');
    expect(text).toMatch(/"nodes": \[\s*\{\s*"name": "browser-prom",\s*"type": "prometheus"\s*\}\s*\]/);

    // GraphiQL sent the query as a GET, with the typed header and the CSRF header it is configured with.
    const last = graphqlRequests.at(-1)!;
    expect(last.method).toBe('GET');
    expect(last.headers).toMatchObject({ authorization: ADMIN, 'x-graphql-yoga-csrf': '1' });
    expect(external).toEqual([]);
    await page.context().close();
  }, 300_000);
});
