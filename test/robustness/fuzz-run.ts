import { Agent } from 'node:http';
import { call, ADMIN, type TestServer } from '../support/server.ts';
import { bodyOf, describeCase, generateCases, judge, type FuzzCase, type FuzzContext } from './fuzz-cases.ts';
import { createDataSource, createUser, pool, rawRequest } from './helpers.ts';

export interface FuzzReport {
  sent: number;
  byTarget: Record<string, number>;
  byStatus: Record<number, number>;
  failures: string[];
  millis: number;
}

/** A server admin, an org Admin token and a data source for the fuzzer to aim at. */
export async function prepareFuzzTargets(server: TestServer): Promise<FuzzContext> {
  // A second server admin: the bootstrap admin's id (1) stays out of reach of fuzzed user ids anyway.
  const admin = await createUser(server, 'fuzz-admin', 'Admin', 1, 'fuzz-admin-pw');
  await server.sql('update "user" set is_admin = true where id = $1', [admin.id]);
  const key = await call(server, 'POST', '/api/auth/keys', { auth: ADMIN, body: { name: 'fuzz-token', role: 'Admin' } });
  if (key.status !== 200) throw new Error(`creating the fuzz token failed: ${key.text}`);
  const dataSource = await createDataSource(server, ADMIN, { name: 'fuzz-target', url: 'http://fuzz.invalid:9090', jsonData: { a: 1 } });
  const self = await createUser(server, 'fuzz-self', 'Viewer', 1, 'fuzz-self-pw');
  return { adminAuth: admin.auth, tokenAuth: `Bearer ${key.body.key}`, selfAuth: self.auth, dataSource };
}

/** Sends every case over keep-alive connections and judges each answer. */
export async function runFuzz(server: TestServer, ctx: FuzzContext, options: { seed: number; count: number; concurrency: number }): Promise<FuzzReport> {
  const cases = generateCases(ctx, options.seed, options.count);
  const agent = new Agent({ keepAlive: true, maxSockets: options.concurrency });
  const report: FuzzReport = { sent: 0, byTarget: {}, byStatus: {}, failures: [], millis: 0 };
  const started = performance.now();
  try {
    await pool(cases, options.concurrency, async (fuzzCase: FuzzCase) => {
      report.byTarget[fuzzCase.target] = (report.byTarget[fuzzCase.target] ?? 0) + 1;
      try {
        const reply = await rawRequest(server.url, { ...fuzzCase.request, body: bodyOf(fuzzCase) }, agent, 30_000);
        report.sent++;
        report.byStatus[reply.status] = (report.byStatus[reply.status] ?? 0) + 1;
        for (const problem of judge(fuzzCase, reply)) report.failures.push(`${problem} <- ${describeCase(fuzzCase)}`);
      } catch (error) {
        report.failures.push(`no answer (${(error as Error).message}) <- ${describeCase(fuzzCase)}`);
      }
    });
  } finally {
    agent.destroy();
  }
  report.millis = performance.now() - started;
  return report;
}
