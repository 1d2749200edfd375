import { ROUTES } from '../../src/http/routes.ts';
import { fmt, pairedRatio, roundRatios, seed, spread } from '../lib/harness.ts';
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
    const vsUncached = pairedRatio(withCache!, withoutCache!);
    const vsToken = pairedRatio(withCache!, tokenRead!);
    const scenario = 'Basic authentication (verified-credential cache)';
    return [
      { scenario, measurement: `GET ${path}, Basic, cache on`, value: fmt.rps(withCache!.median.requestsPerSecond), ratio: fmt.ratio(vsUncached, 'cache off'), target: '>= 50x', pass: vsUncached >= 50, notes: `${fmt.latency(withCache!.median)}; ${spread(roundRatios(withCache!, withoutCache!))}; 50x the uncached route would take ${fmt.rps(50 * withoutCache!.median.requestsPerSecond)}` },
      { scenario, measurement: `GET ${path}, Basic, cache on (vs token)`, value: fmt.rps(withCache!.median.requestsPerSecond), ratio: fmt.ratio(vsToken, 'token read'), target: '>= 0.8x', pass: vsToken >= 0.8, notes: spread(roundRatios(withCache!, tokenRead!)) },
      { scenario, measurement: `GET ${path}, Basic, cache off (argon2id every request)`, value: fmt.rps(withoutCache!.median.requestsPerSecond), notes: fmt.latency(withoutCache!.median) },
      { scenario, measurement: 'GET /api/datasources/:id, token (baseline)', value: fmt.rps(tokenRead!.median.requestsPerSecond), notes: fmt.latency(tokenRead!.median) },
    ];
  } finally {
    await Promise.all([cached.close(), uncached.close()]);
  }
}
