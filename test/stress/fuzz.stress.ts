import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { ADMIN, call, startTestServer, type TestServer } from '../support/server.ts';
import type { FuzzContext } from '../robustness/fuzz-cases.ts';
import { prepareFuzzTargets, runFuzz } from '../robustness/fuzz-run.ts';

/** The long fuzzing run: the fast suite's generator under other seeds, many more requests. */
const SEEDS = [1, 2, 3, 4, 5];
const PER_SEED = 12_000;

let server: TestServer;
let ctx: FuzzContext;

beforeAll(async () => {
  server = await startTestServer();
  ctx = await prepareFuzzTargets(server);
});
afterAll(() => server.close());

describe(`fuzzing: ${SEEDS.length} seeds x ${PER_SEED} requests`, () => {
  it.each(SEEDS.map((seed) => [seed]))('seed %i: no 5xx, no hang, JSON errors only', async (seed) => {
    const report = await runFuzz(server, ctx, { seed, count: PER_SEED, concurrency: 32 });
    expect(report.failures.slice(0, 25)).toEqual([]);
    expect(report.sent).toBe(PER_SEED);
    expect(server.logs.filter((line) => Number(line.level) >= 50).map((line) => String(line.msg))).toEqual([]);
    expect((await call(server, 'GET', '/api/datasources', { auth: ADMIN })).status).toBe(200);
  });
});
