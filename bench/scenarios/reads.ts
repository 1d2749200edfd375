import { fmt, pairedRatio, roundRatios, seed, spread } from '../lib/harness.ts';
import type { BenchContext, BenchRow } from '../lib/types.ts';

/** Every field of the REST answer, asked for through GraphQL. */
const FIELDS = 'id uid orgId name type typeLogoUrl access url password user database basicAuth basicAuthUser basicAuthPassword withCredentials isDefault jsonData secureJsonFields version readOnly';

/**
 * One data source read with a token: the REST route, the same through POST /graphql, and two
 * hand-written baselines doing the same work (token lookup + one select) with MikroORM and raw pg.
 */
export default async function reads(ctx: BenchContext): Promise<BenchRow[]> {
  const connection = await ctx.createDatabase('bench_reads');
  // REST and GraphQL each get an app process of their own, as each baseline has: a baseline
  // process only ever runs its one route, while a shared one runs both routes' code through the
  // same authentication and MikroORM paths.
  const app = await ctx.startTarget({ kind: 'app', connection });
  const graphqlApp = await ctx.startTarget({ kind: 'app', connection });
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
    for (const baseline of [orm, raw]) {
      const got = await answer(baseline.url);
      if (got !== expected) throw new Error(`baseline answers differently:\n${got}\n${expected}`);
    }
    ctx.log(`reads: GET ${path} (REST, GraphQL, hand-written MikroORM, raw pg)`);
    // REST sits between the two variants its targets compare it with.
    const [handOrm, rest, graphql, handPg] = await ctx.compare([
      { name: 'MikroORM by hand', target: orm, load: { path, headers } },
      { name: 'REST', target: app, load: { path, headers } },
      { name: 'GraphQL', target: graphqlApp, load: { method: 'POST', path: '/graphql', headers: { ...headers, 'content-type': 'application/json' }, body: JSON.stringify({ query: `{ dataSource(id: ${dataSourceId}) { ${FIELDS} } }` }) } },
      { name: 'raw pg by hand', target: raw, load: { path, headers } },
    ]);
    const restVsOrm = pairedRatio(rest!, handOrm!);
    const graphqlVsRest = pairedRatio(graphql!, rest!);
    const scenario = 'Data source read with a token';
    return [
      { scenario, measurement: 'GET /api/datasources/:id (REST)', value: fmt.rps(rest!.median.requestsPerSecond), ratio: fmt.ratio(restVsOrm, 'MikroORM by hand'), target: '>= 0.9x', pass: restVsOrm >= 0.9, notes: `${fmt.latency(rest!.median)}; ${spread(roundRatios(rest!, handOrm!))}` },
      { scenario, measurement: 'POST /graphql `dataSource(id)`, all fields', value: fmt.rps(graphql!.median.requestsPerSecond), ratio: fmt.ratio(graphqlVsRest, 'REST'), target: '>= 0.6x', pass: graphqlVsRest >= 0.6, notes: `${fmt.latency(graphql!.median)}; ${spread(roundRatios(graphql!, rest!))}` },
      { scenario, measurement: 'hand-written node:http + MikroORM findOne (baseline)', value: fmt.rps(handOrm!.median.requestsPerSecond), notes: fmt.latency(handOrm!.median) },
      { scenario, measurement: 'hand-written node:http + raw pg (baseline)', value: fmt.rps(handPg!.median.requestsPerSecond), ratio: fmt.ratio(pairedRatio(rest!, handPg!), 'REST vs raw pg'), notes: fmt.latency(handPg!.median) },
    ];
  } finally {
    await Promise.all([app.close(), graphqlApp.close(), orm.close(), raw.close()]);
  }
}
