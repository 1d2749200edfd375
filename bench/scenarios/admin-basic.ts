import { ROUTES } from '../../src/http/routes.ts';
import { compareRounds, figures, seed } from '../lib/harness.ts';
import { fmt } from '../lib/report.ts';
import type { BenchContext, BenchRow } from '../lib/types.ts';

const ADMIN = `Basic ${Buffer.from('admin:admin').toString('base64')}`;

/** GET /api/admin/stats while it exists; otherwise the first Basic-only route with no parameters. */
function basicRoute(): string {
  const stats = ROUTES.find((r) => r.method === 'GET' && r.path === '/api/admin/stats');
  const fallback = ROUTES.find((r) => r.method === 'GET' && r.access.kind === 'server-admin' && !r.path.includes(':'));
  const route = stats ?? fallback ?? ROUTES.find((r) => r.method === 'GET' && !r.path.includes(':'))!;
  return route.path;
}

/**
 * A Basic-authenticated admin route with the verified-credential cache (argon2 once, then an HMAC
 * lookup) against the same route with the cache off (argon2 on every request), and against a
 * token-authenticated read on the same server.
 */
export default async function adminBasic(ctx: BenchContext): Promise<BenchRow[]> {
  const connection = await ctx.createDatabase('bench_admin');
  const cached = await ctx.startTarget({ kind: 'app', connection });
  const uncached = await ctx.startTarget({ kind: 'app', connection, app: { cacheCredentials: false } });
  try {
    const { token, dataSourceId } = await seed(cached);
    const path = basicRoute();
    ctx.log(`admin: GET ${path} with Basic, cache on and off; GET /api/datasources/:id with a token`);
    // The cached route sits between the two variants its targets compare it with.
    const [withoutCache, withCache, tokenRead] = await ctx.compare([
      { name: 'Basic, cache off', target: uncached, load: { path, headers: { authorization: ADMIN } } },
      { name: 'Basic, cache on', target: cached, load: { path, headers: { authorization: ADMIN } } },
      { name: 'token read', target: cached, load: { path: `/api/datasources/${dataSourceId}`, headers: { authorization: token } } },
    ]);
    const scenario = 'Basic authentication (verified-credential cache)';
    const row = (measurement: string, m: typeof withCache) => ({ scenario, measurement, value: figures(m!).requestsPerSecond, unit: 'req/s' as const, load: figures(m!) });
    return [
      { ...row(`GET ${path}, Basic, cache on`, withCache), comparisons: compareRounds(withCache!, withoutCache!, 'cache off'), target: { on: 'ratio', op: '>=', bound: 50 }, notes: `50x the uncached route's throughput would be ${fmt.rps(50 * figures(withoutCache!).requestsPerSecond)}` },
      { ...row(`GET ${path}, Basic, cache on (vs token)`, withCache), comparisons: compareRounds(withCache!, tokenRead!, 'token read'), target: { on: 'ratio', op: '>=', bound: 0.8 } },
      { ...row(`GET ${path}, Basic, cache off (argon2id every request)`, withoutCache) },
      { ...row('GET /api/datasources/:id, token (baseline)', tokenRead) },
    ];
  } finally {
    await Promise.all([cached.close(), uncached.close()]);
  }
}
