import { execFile } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { startTestServer, type TestServer } from '../support/server.ts';

// The README's tour, run as a reader runs it: each shell block in bash, its curl calls against a
// server started as `npm start` starts one (admin / admin), failing on any answer that is not 2xx.
// The page server of the last step is left out: test/browser/live-page.test.ts drives the page.

const run = promisify(execFile);
const readme = readFileSync(new URL('../../README.md', import.meta.url), 'utf8');
const tour = /## A five-minute tour\n([\s\S]*?)\n## /.exec(readme)![1]!;
const blocks = [...tour.matchAll(/```sh\n([\s\S]*?)```/g)].map((m) => m[1]!);

let server: TestServer;
beforeAll(async () => {
  server = await startTestServer();
});
afterAll(() => server?.close());

/** A block's output, run in bash with curl failing on any status past 2xx. */
async function runBlock(block: string): Promise<string> {
  const script = block
    .replaceAll('http://localhost:3000', server.url)
    .split('\n').filter((line) => !line.startsWith('npm run example:page')).join('\n');
  const { stdout } = await run('bash', ['-c', `set -euo pipefail\ncurl() { command curl --fail-with-body -sS "$@"; }\n${script}`], { timeout: 30_000 });
  return stdout;
}

describe("the README's five-minute tour", () => {
  it('has its four steps, each a block of shell', () => {
    expect(blocks.map((block) => block.split('\n')[0])).toEqual([
      expect.stringMatching(/^# 1\. REST/), expect.stringMatching(/^# 2\. A query/),
      expect.stringMatching(/^# 3\. GraphQL/), expect.stringMatching(/^# 4\. A live page/),
    ]);
  });

  it('runs as written, each step answering what it says', async () => {
    const created = await runBlock(blocks[0]!);
    expect(created).toContain('"message":"Datasource added"');
    expect(created).toContain('"uid":"demo"');

    const query = JSON.parse(await runBlock(blocks[1]!)) as { results: Record<string, { status: number; frames: Array<{ data: { values: unknown[][] } }> }> };
    expect(Object.keys(query.results)).toEqual(['A']);
    expect(query.results.A!.status).toBe(200);
    expect(query.results.A!.frames).toHaveLength(2);
    expect(query.results.A!.frames[0]!.data.values[0]!.length).toBeGreaterThan(0);

    const graph = JSON.parse(await runBlock(blocks[2]!)) as { data: { viewer: { login: string; currentOrganization: { dataSources: { totalCount: number; nodes: Array<{ uid: string; type: string }> } } } } };
    expect(graph.data.viewer.login).toBe('admin');
    expect(graph.data.viewer.currentOrganization.dataSources.totalCount).toBe(1);
    expect(graph.data.viewer.currentOrganization.dataSources.nodes[0]).toMatchObject({ uid: 'demo', type: 'grafana-testdata-datasource' });

    const token = await runBlock(blocks[3]!);
    expect(token).toMatch(/"key":"glsa_[A-Za-z0-9_]+"/);
    expect(blocks[3]).toContain('npm run example:page -- http://localhost:3000');
  }, 60_000);
});
