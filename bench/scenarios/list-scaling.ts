import pg from 'pg';
import { figures, seed } from '../lib/harness.ts';
import { fmt } from '../lib/report.ts';
import type { BenchContext, BenchRow, LoadFigures, Target } from '../lib/types.ts';

const SIZES = [1, 100, 1_000, 5_000];
const LARGEST = SIZES[SIZES.length - 1]!;
/** Issue targets: server CPU per extra data source, and per request at the largest size. */
const TARGET_PER_ROW_MICROS = 12;
const TARGET_LARGEST_MS = 60;
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
 * GET /api/datasources with 1, 100, 1,000 and 5,000 data sources: the server's CPU per request,
 * throughput and latency at one connection, the CPU each extra row costs (from CPU per request, not
 * throughput, which on two shared cores also carries the load generator's and PostgreSQL's share),
 * and SQL statements per request (which must not grow with the rows: no N+1).
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
    const measured: Array<{ size: number; load: LoadFigures; statements: number; bytes: number }> = [];
    for (const size of SIZES) {
      await fillTo(client, size);
      const body = await (await fetch(`${app.url}/api/datasources`, { headers: { authorization: token } })).text();
      const listed = (JSON.parse(body) as unknown[]).length;
      if (listed !== size) throw new Error(`expected ${size} data sources, the API listed ${listed}`);
      const statements = await statementsPerRequest(counting, '/api/datasources', token);
      ctx.log(`list: ${size} data sources, ${statements} SQL statements per request`);
      // One connection: each request's cost without queueing behind others.
      const [m] = await ctx.compare([{ name: `${size} rows`, target: app, load: { path: '/api/datasources', headers: { authorization: token }, connections: 1 } }]);
      const load = figures(m!);
      if (load.cpuMicrosPerRequest === undefined) throw new Error('the app reported no CPU');
      measured.push({ size, load, statements, bytes: Buffer.byteLength(body) });
    }
    const base = measured[0]!;
    const perRow = (m: (typeof measured)[number]) => (m.load.cpuMicrosPerRequest! - base.load.cpuMicrosPerRequest!) / (m.size - base.size);
    for (const m of measured) {
      rows.push({
        scenario,
        measurement: `${m.size.toLocaleString('en-US')} data source${m.size === 1 ? '' : 's'}: server CPU/request (${fmt.bytes(m.bytes)} answer, 1 connection)`,
        value: m.load.cpuMicrosPerRequest! / 1000,
        unit: 'ms',
        load: m.load,
        ...(m.size === LARGEST ? { target: { on: 'value' as const, op: '<' as const, bound: TARGET_LARGEST_MS } } : {}),
        notes: `${m.statements} SQL statements/request${m.size > base.size ? `; +${fmt.us(perRow(m))} server CPU per extra row` : ''}`,
      });
    }
    const largest = measured[measured.length - 1]!;
    rows.push({
      scenario,
      measurement: `server CPU per extra data source (${LARGEST.toLocaleString('en-US')} rows against ${base.size})`,
      value: perRow(largest),
      unit: 'µs',
      target: { on: 'value', op: '<=', bound: TARGET_PER_ROW_MICROS },
      notes: 'difference of the two sizes\' server CPU per request (each the median of its rounds), over the extra rows',
    });
    const counts = measured.map((m) => m.statements);
    rows.push({
      scenario,
      measurement: 'SQL statements per request, by size',
      // Judged on how much the count moves between sizes: 0 when constant.
      value: Math.max(...counts) - Math.min(...counts),
      unit: 'count',
      text: counts.join(' / '),
      target: { on: 'value', op: '<=', bound: 0, label: 'constant (no N+1)' },
      notes: `counted over ${COUNTED_REQUESTS} sequential requests per size from a caller already verified, with MikroORM's query logger`,
    });
    return rows;
  } finally {
    await client.end();
    await Promise.all([app.close(), counting.close()]);
  }
}
