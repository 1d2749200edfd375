import { compareRounds, figures, seed } from '../lib/harness.ts';
import type { BenchContext, BenchRow } from '../lib/types.ts';

/** Every field of the REST answer, asked for through GraphQL. */
/** The graph's fields of what `GET /api/datasources/:id` answers (the REST layer adds its legacy fields and logo URL). */
const FIELDS = 'id: databaseId uid orgId name type access url user database basicAuth basicAuthUser withCredentials isDefault jsonData secureJsonFields version readOnly';

/**
 * One data source read with a token: the REST route, the same through POST /graphql, and two
 * hand-written baselines doing the same work (token lookup + one select) with MikroORM and raw pg;
 * and REST once more in a second process, as the control.
 */
export default async function reads(ctx: BenchContext): Promise<BenchRow[]> {
  const connection = await ctx.createDatabase('bench_reads');
  // REST and GraphQL each get an app process of their own, as each baseline has: a baseline
  // process only ever runs its one route, while a shared one runs both routes' code through the
  // same authentication and MikroORM paths.
  const app = await ctx.startTarget({ kind: 'app', connection });
  const graphqlApp = await ctx.startTarget({ kind: 'app', connection });
  // The control: REST again, the same code in a process of its own. How far it strays from REST
  // is how far two processes of one server differ, which no ratio between processes can beat.
  const restTwin = await ctx.startTarget({ kind: 'app', connection });
  const orm = await ctx.startTarget({ kind: 'orm-handler', connection });
  const raw = await ctx.startTarget({ kind: 'pg-handler', connection });
  try {
    const { token, dataSourceId } = await seed(app);
    const path = `/api/datasources/${dataSourceId}`;
    const headers = { authorization: token };
    // The baselines must answer what the route answers, or the comparison is meaningless.
    const answer = async (url: string) => {
      const res = await fetch(`${url}${path}`, { headers });
      const shown = [...res.headers].filter(([name]) => name !== 'date' && name !== 'keep-alive' && name !== 'connection').sort();
      return `${res.status} ${JSON.stringify(shown)} ${await res.text()}`;
    };
    const expected = await answer(app.url);
    for (const baseline of [orm, raw, restTwin]) {
      const got = await answer(baseline.url);
      if (got !== expected) throw new Error(`baseline answers differently:\n${got}\n${expected}`);
    }
    ctx.log(`reads: GET ${path} (REST, GraphQL, hand-written MikroORM, raw pg, and REST in a second process as the control)`);
    // REST sits between the two variants its targets compare it with.
    const [twin, handOrm, rest, graphql, handPg] = await ctx.compare([
      { name: 'REST, second process', target: restTwin, load: { path, headers } },
      { name: 'MikroORM by hand', target: orm, load: { path, headers } },
      { name: 'REST', target: app, load: { path, headers } },
      { name: 'GraphQL', target: graphqlApp, load: { method: 'POST', path: '/graphql', headers: { ...headers, 'content-type': 'application/json' }, body: JSON.stringify({ query: `{ currentOrganization { dataSource(databaseId: ${dataSourceId}) { ${FIELDS} } } }` }) } },
      { name: 'raw pg by hand', target: raw, load: { path, headers } },
    ]);
    const scenario = 'Data source read with a token';
    const row = (measurement: string, m: typeof rest) => ({ scenario, measurement, value: figures(m!).requestsPerSecond, unit: 'req/s' as const, load: figures(m!) });
    return [
      { ...row('GET /api/datasources/:id (REST)', rest), comparisons: compareRounds(rest!, handOrm!, 'MikroORM by hand'), target: { on: 'ratio', op: '>=', bound: 0.9 } },
      { ...row('POST /graphql `dataSource(id)`, all fields', graphql), comparisons: compareRounds(graphql!, rest!, 'REST'), target: { on: 'ratio', op: '>=', bound: 0.8 } },
      { ...row('hand-written node:http + MikroORM findOne (baseline)', handOrm) },
      // REST's ratio to the floor of the work it does, on the baseline's row.
      { ...row('hand-written node:http + raw pg (baseline; REST compared with it)', handPg), comparisons: compareRounds(rest!, handPg!, 'raw pg by hand') },
      { ...row('GET /api/datasources/:id (REST), the same code in a second process (control)', twin), comparisons: compareRounds(twin!, rest!, 'REST') },
    ];
  } finally {
    await Promise.all([app.close(), graphqlApp.close(), restTwin.close(), orm.close(), raw.close()]);
  }
}
