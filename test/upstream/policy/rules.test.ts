import { describe, expect, it } from '@jest/globals';
import { MESSAGES } from '../../../src/errors/messages.ts';
import { checkProxyRequest, cleanRelativePath } from '../../../src/upstream/policy/rules.ts';
import type { HeldRole } from '../../../src/roles.ts';

const ES_DELETE = 'deletes not allowed on proxied Elasticsearch datasource';
const ES_PUT = 'puts not allowed on proxied Elasticsearch datasource';
const ES_POST = 'posts not allowed on proxied Elasticsearch datasource except on /_msearch';
const PROM_POST = 'non allow-listed POSTs not allowed on proxied Prometheus datasource';
const PROM_PUT = 'non allow-listed PUTs not allowed on proxied Prometheus datasource';
const PROM_DELETE = 'non allow-listed DELETEs not allowed on proxied Prometheus datasource';
const ROUTE_DENIED = 'plugin proxy route access denied';

describe('checkProxyRequest', () => {
  const table: Array<[type: string, method: string, path: string, role: HeldRole, expected: string | null]> = [
    // Elasticsearch: read-only but for _msearch (an exact comparison)
    ['elasticsearch', 'GET', 'idx/_search', 'Viewer', null],
    ['elasticsearch', 'HEAD', 'idx', 'Viewer', null],
    ['elasticsearch', 'PATCH', 'idx', 'Viewer', null],
    ['elasticsearch', 'POST', '_msearch', 'Viewer', null],
    ['elasticsearch', 'POST', 'idx/_search', 'Admin', ES_POST],
    ['elasticsearch', 'POST', 'idx/_msearch', 'Admin', ES_POST],
    ['elasticsearch', 'POST', '_msearch/', 'Admin', ES_POST],
    ['elasticsearch', 'POST', '', 'Admin', ES_POST],
    ['elasticsearch', 'DELETE', 'idx', 'Admin', ES_DELETE],
    ['elasticsearch', 'DELETE', '_msearch', 'Admin', ES_DELETE],
    ['elasticsearch', 'PUT', 'idx', 'Admin', ES_PUT],
    ['elasticsearch', 'put', 'idx', 'Admin', ES_PUT],
    // Prometheus: the plugin.json routes
    ['prometheus', 'GET', 'api/v1/label/__name__/values', 'Viewer', null],
    ['prometheus', 'GET', 'api/v1/query', 'Viewer', null],
    ['prometheus', 'POST', 'api/v1/query', 'Viewer', null],
    ['prometheus', 'POST', 'api/v1/query_range', 'Viewer', null],
    ['prometheus', 'POST', 'api/v1/series', 'Viewer', null],
    ['prometheus', 'POST', 'api/v1/labels', 'Viewer', null],
    ['prometheus', 'POST', 'api/v1/query_exemplars', 'Viewer', null],
    ['prometheus', 'POST', '/api/v1/query', 'Viewer', null],
    ['prometheus', 'POST', 'api/v1/query/', 'Viewer', null],
    ['prometheus', 'POST', 'api/v1/label/__name__/values', 'Admin', PROM_POST],
    ['prometheus', 'POST', 'api/v1/admin/tsdb/delete_series', 'Admin', PROM_POST],
    ['prometheus', 'POST', 'api/v1/query/../../admin/tsdb/snapshot', 'Admin', PROM_POST], // cleaned before matching
    ['prometheus', 'POST', 'api/v2/query', 'Admin', PROM_POST],
    ['prometheus', 'POST', '', 'Admin', PROM_POST],
    ['prometheus', 'PUT', 'api/v1/query', 'Admin', PROM_PUT],
    ['prometheus', 'PUT', 'api/v1/admin', 'Admin', PROM_PUT],
    ['prometheus', 'DELETE', 'api/v1/admin', 'Admin', PROM_DELETE],
    ['prometheus', 'DELETE', 'api/v1/series', 'Admin', PROM_DELETE],
    ['prometheus', 'GET', 'rules', 'Viewer', null],
    // Routes the plugin guards with `datasources:query` on the data source (checked before these
    // rules): a `None` member whose grants let it query passes; the Editor routes stay refused.
    ['prometheus', 'GET', 'rules', 'None', null],
    ['prometheus', 'POST', 'api/v1/query', 'None', null],
    ['prometheus', 'POST', 'api/v1/query_range', 'None', null],
    ['prometheus', 'POST', 'rules', 'None', ROUTE_DENIED],
    ['prometheus', 'DELETE', 'config/v1/rules/ns', 'None', ROUTE_DENIED],
    ['prometheus', 'POST', 'rules', 'Editor', null],
    ['prometheus', 'POST', 'rules/ns', 'Editor', null],
    ['prometheus', 'POST', 'rules', 'Viewer', ROUTE_DENIED],
    ['prometheus', 'DELETE', 'rules/ns/group', 'Editor', null],
    ['prometheus', 'DELETE', 'rules/ns/group', 'Viewer', ROUTE_DENIED],
    ['prometheus', 'POST', 'config/v1/rules/ns', 'Admin', null],
    ['prometheus', 'DELETE', 'config/v1/rules/ns', 'Editor', null],
    ['prometheus', 'DELETE', 'config/v1/rules/ns', 'Viewer', ROUTE_DENIED],
    ['prometheus', 'PUT', 'rules', 'Admin', PROM_PUT],
    ['prometheus', 'PATCH', 'api/v1/admin', 'Viewer', null], // Grafana only restricts DELETE/PUT/POST
    ['grafana-amazonprometheus-datasource', 'POST', 'api/v1/label/x/values', 'Admin', PROM_POST],
    ['grafana-azureprometheus-datasource', 'POST', 'api/v1/query', 'Viewer', null],
    // Other types are not restricted
    ['loki', 'DELETE', 'anything', 'Viewer', null],
    ['graphite', 'POST', 'render', 'Viewer', null],
    ['influxdb', 'PUT', 'write', 'Viewer', null],
    ['Prometheus', 'POST', 'x', 'Viewer', null], // plugin ids are case-sensitive
  ];
  it.each(table)('%s %s %j as %s -> %j', (type, method, path, role, expected) => {
    expect(checkProxyRequest(type, method, path, role)).toBe(expected);
  });

  it('assumes the Viewer role when none is given', () => {
    expect(checkProxyRequest('prometheus', 'POST', 'api/v1/query')).toBeNull();
    expect(checkProxyRequest('prometheus', 'POST', 'rules')).toBe(ROUTE_DENIED);
  });

  it('words its refusals as Grafana does', () => {
    expect(MESSAGES.proxy).toMatchObject({ esDelete: ES_DELETE, esPost: ES_POST, esPut: ES_PUT, promDelete: PROM_DELETE, promPost: PROM_POST, promPut: PROM_PUT, routeDenied: ROUTE_DENIED });
  });
});

describe('cleanRelativePath', () => {
  it.each([
    ['', ''],
    ['/', ''],
    ['/rules', 'rules'],
    ['rules/', 'rules'],
    ['a//b', 'a/b'],
    ['a/./b', 'a/b'],
    ['a/../b', 'b'],
    ['../../x', 'x'],
  ])('%j -> %j', (path, clean) => {
    expect(cleanRelativePath(path)).toBe(clean);
  });
});
