/**
 * Grafana's per-type restrictions on proxied calls (`validateRequest` in ds_proxy.go), after the
 * whitelist: Elasticsearch is read-only but for `_msearch`; Prometheus allows writes only on the
 * routes its plugin.json lists, each with a minimum org role. Resources that pass a client's
 * request on obey the same rules (`checkPassedOn`).
 */
import { MESSAGES } from '../../errors/messages.ts';
import { roleAtLeast, type OrgRole, type HeldRole } from '../../roles.ts';
import { safeProxyPath } from './path.ts';

export interface PluginRoute {
  /** '' or '*' match any method. */
  readonly method: string;
  readonly path: string;
  readonly reqRole: OrgRole;
  /**
   * The access-control action the route asks for instead of the role, where the plugin names one:
   * `datasources:query` on this data source, which the proxy has checked before these rules (so a
   * `None` member whose grants let it query passes, as in the original).
   */
  readonly reqAction?: 'datasources:query';
}

/** The Prometheus plugin's `routes` (plugin.json), in its order: the first match wins. */
export const PROMETHEUS_ROUTES: readonly PluginRoute[] = [
  { method: 'POST', path: 'api/v1/query', reqRole: 'Viewer', reqAction: 'datasources:query' },
  { method: 'POST', path: 'api/v1/query_range', reqRole: 'Viewer', reqAction: 'datasources:query' },
  { method: 'POST', path: 'api/v1/series', reqRole: 'Viewer', reqAction: 'datasources:query' },
  { method: 'POST', path: 'api/v1/labels', reqRole: 'Viewer', reqAction: 'datasources:query' },
  { method: 'POST', path: 'api/v1/query_exemplars', reqRole: 'Viewer', reqAction: 'datasources:query' },
  { method: 'GET', path: '/rules', reqRole: 'Viewer', reqAction: 'datasources:query' },
  { method: 'POST', path: '/rules', reqRole: 'Editor' },
  { method: 'DELETE', path: '/rules', reqRole: 'Editor' },
  { method: 'DELETE', path: '/config/v1/rules', reqRole: 'Editor' },
  { method: 'POST', path: '/config/v1/rules', reqRole: 'Editor' },
];

/** Core Prometheus and the Amazon/Azure flavours, which Grafana restricts alike. */
const PROMETHEUS_TYPES = new Set(['prometheus', 'grafana-amazonprometheus-datasource', 'grafana-azureprometheus-datasource']);

/**
 * Grafana's `CleanRelativePath`: resolve `.`/`..` as if rooted, drop empty segments and the
 * leading slash ('' for the root). Route matching uses it on both sides so `/rules` and `rules`
 * are the same route, and `api/v1/query/../../admin` does not match `api/v1/query`.
 */
export function cleanRelativePath(path: string): string {
  // Without dot segments or empty ones (all that safeProxyPath lets through), cleaning only drops
  // a leading and a trailing slash.
  if (!/(?:^|\/)\.{1,2}(?:\/|$)|\/\//.test(path)) return path.replace(/^\/|\/$/g, '');
  const out: string[] = [];
  for (const segment of path.split('/')) {
    if (segment === '' || segment === '.') continue;
    if (segment === '..') out.pop();
    else out.push(segment);
  }
  return out.join('/');
}

/**
 * The first route whose method matches and whose cleaned path is a string prefix of the cleaned
 * proxy path (a string prefix, as Grafana: `api/v1/query` also covers `api/v1/query_range`).
 */
export function matchPluginRoute(routes: readonly PluginRoute[], method: string, proxyPath: string): PluginRoute | null {
  const path = cleanRelativePath(proxyPath);
  const verb = method.toUpperCase();
  return routes.find((r) => (r.method === '' || r.method === '*' || r.method === verb) && path.startsWith(cleanedRoutePath(r))) ?? null;
}

/** Route paths are constants: clean each once rather than on every proxied call. */
const CLEANED_ROUTE_PATHS = new WeakMap<PluginRoute, string>();
function cleanedRoutePath(route: PluginRoute): string {
  let cleaned = CLEANED_ROUTE_PATHS.get(route);
  if (cleaned === undefined) CLEANED_ROUTE_PATHS.set(route, (cleaned = cleanRelativePath(route.path)));
  return cleaned;
}

/**
 * The 403 message Grafana would answer for this call, or null when it may go ahead. `proxyPath`
 * is the escaped proxy path (check it with `safeProxyPath` first). `orgRole` is the caller's org
 * role (pass 'Admin' for a server admin); it defaults to the least a proxy user has, so routes
 * that need Editor are refused unless the caller's role is given.
 */
export function checkProxyRequest(type: string, method: string, proxyPath: string, orgRole: HeldRole = 'Viewer'): string | null {
  // Node's parser only yields upper-case methods; upper-casing keeps a stray lower-case one from slipping by.
  const verb = method.toUpperCase();
  if (type === 'elasticsearch') {
    if (verb === 'DELETE') return MESSAGES.proxy.esDelete;
    if (verb === 'PUT') return MESSAGES.proxy.esPut;
    // An exact comparison, as Grafana: `idx/_msearch` and `_msearch/` are refused.
    if (verb === 'POST' && proxyPath !== '_msearch') return MESSAGES.proxy.esPost;
    return null;
  }
  if (!PROMETHEUS_TYPES.has(type)) return null;
  const route = matchPluginRoute(PROMETHEUS_ROUTES, verb, proxyPath);
  if (route) return route.reqAction === 'datasources:query' || roleAtLeast(orgRole, route.reqRole) ? null : MESSAGES.proxy.routeDenied;
  if (verb === 'DELETE') return MESSAGES.proxy.promDelete;
  if (verb === 'PUT') return MESSAGES.proxy.promPut;
  if (verb === 'POST') return MESSAGES.proxy.promPost;
  return null;
}

/**
 * The refusal of a client's request passed on to a data source below its URL (the proxy's and the
 * resources' one rule), or null: a path that could leave the data source's URL in any encoding is
 * 400 "invalid proxy path"; a method or path the data source's type does not allow (above) is 403
 * with the proxy's message. `orgRole` as for `checkProxyRequest`.
 */
export function checkPassedOn(type: string, method: string, path: string, orgRole: HeldRole): { status: 400 | 403; message: string } | null {
  if (safeProxyPath(path) === null) return { status: 400, message: MESSAGES.proxy.badPath };
  const refused = checkProxyRequest(type, method, path, orgRole);
  return refused === null ? null : { status: 403, message: refused };
}
