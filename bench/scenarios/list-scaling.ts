import pg from 'pg';
import { fmt, seed } from '../lib/harness.ts';
import type { BenchContext, BenchRow, LoadResult, Target } from '../lib/types.ts';

const SIZES = [1, 100, 1_000, 5_000];
/** Requests sent one at a time to count SQL statements (the count is per request, so few are enough). */
const COUNTED_REQUESTS = 20;

/** Adds data sources (directly in SQL: the API would take minutes for thousands) until there are `total`. */
async function fillTo(client: pg.Client, total: number): Promise<void> {
  await client.query(
    `insert into data_source (org_id, uid, name, type, access, url, basic_auth, basic_auth_user, json_data, secure_json_data)
     select 1, 'bench-' || n, 'bench-source-' || lpad(n::text, 5, '0'), 'prometheus', 'proxy', 'http://prom-' || n || '.example:9090',
            true, 'reader', jsonb_build_object('httpMethod', 'POST', 'timeInterval', '15s'), '{}'::jsonb
       from generate_series((select count(*) from data_source)::int + 1, $1) as n`,
    [total],
  );
}

async function statementsPerRequest(target: Target, path: string, token: string): Promise<number> {
  const get = async () => {
    const res = await fetch(`${target.url}${path}`, { headers: { authorization: token } });
    if (!res.ok) throw new Error(`${path}: ${res.status}`);
    await res.arrayBuffer();
  };
  // Uncounted: the instance's first call from this caller also verifies the token.
  await get();
  const before = await target.queries();
  for (let i = 0; i < COUNTED_REQUESTS; i++) await get();
  return ((await target.queries()) - before) / COUNTED_REQUESTS;
}

/**
 * GET /api/datasources with 1, 100, 1,000 and 5,000 data sources: throughput, latency, the cost of
 * each extra row, and SQL statements per request (which must not grow with the rows: no N+1).
 */
export default async function listScaling(ctx: BenchContext): Promise<BenchRow[]> {
  const connection = await ctx.createDatabase('bench_list');
  const app = await ctx.startTarget({ kind: 'app', connection });
  // A second instance with MikroORM's query logger on, only for counting statements.
  const counting = await ctx.startTarget({ kind: 'app', connection, countQueries: true });
  const client = new pg.Client(connection);
  await client.connect();
  const rows: BenchRow[] = [];
  try {
    const { token } = await seed(app); // the seeded data source is the first of the org's
    const scenario = 'GET /api/datasources as the org grows';
    const measured: Array<{ size: number; result: LoadResult; statements: number; bytes: number }> = [];
    for (const size of SIZES) {
      await fillTo(client, size);
      const body = await (await fetch(`${app.url}/api/datasources`, { headers: { authorization: token } })).text();
      const listed = (JSON.parse(body) as unknown[]).length;
      if (listed !== size) throw new Error(`expected ${size} data sources, the API listed ${listed}`);
      const statements = await statementsPerRequest(counting, '/api/datasources', token);
      ctx.log(`list: ${size} data sources, ${statements} SQL statements per request`);
      // One connection: latency is then the cost of one request, without queueing behind others.
      const [m] = await ctx.compare([{ name: `${size} rows`, target: app, load: { path: '/api/datasources', headers: { authorization: token }, connections: 1 } }]);
      measured.push({ size, result: m!.median, statements, bytes: Buffer.byteLength(body) });
    }
    const constant = measured.every((m) => m.statements === measured[0]!.statements);
    const base = measured[0]!;
    for (const m of measured) {
      // With one connection a request takes 1/throughput; what each extra row adds to that, in µs.
      const perRow = m.size > base.size ? ((1 / m.result.requestsPerSecond - 1 / base.result.requestsPerSecond) * 1e6) / (m.size - base.size) : undefined;
      rows.push({
        scenario,
        measurement: `${m.size.toLocaleString('en-US')} data source${m.size === 1 ? '' : 's'} (${fmt.bytes(m.bytes)} answer, 1 connection)`,
        value: fmt.rps(m.result.requestsPerSecond),
        ratio: m.size > base.size ? fmt.ratio(m.result.requestsPerSecond / base.result.requestsPerSecond, `${base.size} row`) : '',
        notes: `${fmt.latency(m.result)}; ${m.statements} SQL statements/request${perRow === undefined ? '' : `; +${perRow.toFixed(1)} µs per extra row`}`,
      });
    }
    rows.push({
      scenario,
      measurement: 'SQL statements per request, by size',
      value: measured.map((m) => `${m.statements}`).join(' / '),
      target: 'constant (no N+1)',
      pass: constant,
      notes: `counted over ${COUNTED_REQUESTS} sequential requests per size from a caller already verified, with MikroORM's query logger`,
    });
    return rows;
  } finally {
    await client.end();
    await Promise.all([app.close(), counting.close()]);
  }
}
