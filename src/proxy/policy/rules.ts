/** Per-kind method restrictions of the original server's proxy; returns the 403 message or null. */

const PROMETHEUS_ALLOWED: Array<{ method: string; path: string }> = [
  { method: 'POST', path: 'api/v1/query' },
  { method: 'POST', path: 'api/v1/query_range' },
  { method: 'POST', path: 'api/v1/series' },
  { method: 'POST', path: 'api/v1/labels' },
  { method: 'POST', path: 'api/v1/query_exemplars' },
  { method: 'POST', path: 'rules' },
  { method: 'DELETE', path: 'rules' },
  { method: 'POST', path: 'config/v1/rules' },
  { method: 'DELETE', path: 'config/v1/rules' },
];

const PROMETHEUS_TYPES = new Set(['prometheus', 'grafana-amazonprometheus-datasource', 'grafana-azureprometheus-datasource']);

export function checkProxyRequest(type: string, method: string, proxyPath: string): string | null {
  const path = proxyPath.replace(/^\/+/, '');
  if (type === 'elasticsearch') {
    if (method === 'DELETE') return 'deletes not allowed on proxied Elasticsearch datasource';
    if (method === 'PUT') return 'puts not allowed on proxied Elasticsearch datasource';
    if (method === 'POST' && path !== '_msearch') return 'posts not allowed on proxied Elasticsearch datasource except on /_msearch';
    return null;
  }
  if (PROMETHEUS_TYPES.has(type) && (method === 'POST' || method === 'PUT' || method === 'DELETE')) {
    // The plugin routes match by prefix, as the original's route table does.
    if (PROMETHEUS_ALLOWED.some((r) => r.method === method && path.startsWith(r.path))) return null;
    return `non allow-listed ${method}s not allowed on proxied Prometheus datasource`;
  }
  return null;
}
