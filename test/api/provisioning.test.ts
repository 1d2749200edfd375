import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { applyDataSourceProvisioning, readDataSourceProvisioning, ProvisioningError, type DataSourcePlan } from '../../src/provisioning/index.ts';
import { call, startTestServer, type TestServer } from '../support/server.ts';

const root = new URL('../..', import.meta.url).pathname;
let dir = '';
let server: TestServer;

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'dashgate-prov-'));
  server = await startTestServer();
});
afterAll(async () => {
  await server.close();
  await rm(dir, { recursive: true, force: true });
});

let folderCount = 0;
/** A fresh provisioning folder holding `files` under datasources/. */
async function folder(files: Record<string, string>): Promise<string> {
  const root = join(dir, `p${folderCount++}`);
  await mkdir(join(root, 'datasources'), { recursive: true });
  for (const [name, text] of Object.entries(files)) await writeFile(join(root, 'datasources', name), text);
  return root;
}

async function plan(files: Record<string, string>, env: Record<string, string> = {}): Promise<DataSourcePlan> {
  return readDataSourceProvisioning(await folder(files), env);
}

/** The error a plan fails with (so each assertion sees the message, file and line). */
async function failure(files: Record<string, string>, env: Record<string, string> = {}): Promise<ProvisioningError> {
  const error = await plan(files, env).then(() => null, (e: unknown) => e);
  expect(error).toBeInstanceOf(ProvisioningError);
  return error as ProvisioningError;
}

async function apply(p: DataSourcePlan) {
  return applyDataSourceProvisioning(server.orm.em.fork(), server.app.services.dataSources, p);
}

describe('reading provisioning files', () => {
  it('reads every field, applies defaults and expands $VAR, ${VAR} and $$ from the given environment', async () => {
    const p = await plan({
      'a.yaml': `apiVersion: 1
datasources:
  - name: Prom
    type: prometheus
    url: http://\${PROM_HOST}:9090
    uid: prom-uid
    isDefault: true
    jsonData:
      httpMethod: POST
      nested: { region: $REGION, list: [a, "$REGION"] }
      timeout: 5
    secureJsonData:
      httpHeaderValue1: "Bearer $TOKEN"
      literal: "price: $$5"
    user: reader
    database: metrics
    basicAuth: "true"
    basicAuthUser: $USER_NAME
    withCredentials: false
    version: 3
    editable: true
    orgId: 1
  - name: Loki
    type: loki
deleteDatasources:
  - name: Old
  - name: Older
    orgId: 2
`,
    }, { PROM_HOST: 'prom.internal', REGION: 'eu-west-1', TOKEN: 's3cr3t', USER_NAME: 'bob' });

    expect(p.warnings).toEqual([]);
    expect(p.deletions.map(({ name, orgId }) => ({ name, orgId }))).toEqual([{ name: 'Old', orgId: 1 }, { name: 'Older', orgId: 2 }]);
    const [prom, loki] = p.dataSources;
    expect(prom).toMatchObject({
      name: 'Prom', type: 'prometheus', access: 'proxy', url: 'http://prom.internal:9090', uid: 'prom-uid', isDefault: true,
      jsonData: { httpMethod: 'POST', nested: { region: 'eu-west-1', list: ['a', 'eu-west-1'] }, timeout: 5 },
      secureJsonData: { httpHeaderValue1: 'Bearer s3cr3t', literal: 'price: $5' },
      user: 'reader', database: 'metrics', basicAuth: true, basicAuthUser: 'bob', withCredentials: false, version: 3, editable: true, orgId: 1,
    });
    expect(prom!.origin).toMatchObject({ line: 3 });
    // Defaults: org 1, proxy access, not editable (so read-only), no version.
    expect(loki).toMatchObject({ name: 'Loki', orgId: 1, access: 'proxy', editable: false, version: 0, uid: null, jsonData: null, secureJsonData: {} });
  });

  it('takes an integer or boolean from an environment variable, as the original does', async () => {
    const p = await plan({ 'a.yml': 'apiVersion: 1\ndatasources:\n  - name: x\n    type: loki\n    orgId: $ORG\n    isDefault: ${DEFAULT}\n' }, { ORG: '7', DEFAULT: 'true' });
    expect(p.dataSources[0]).toMatchObject({ orgId: 7, isDefault: true });
  });

  it('reads .yaml and .yml files in name order and ignores anything else', async () => {
    const p = await plan({
      'b.yml': 'apiVersion: 1\ndatasources: [{ name: second, type: loki }]\n',
      'a.yaml': 'apiVersion: 1\ndatasources: [{ name: first, type: loki }]\n',
      'sample.yaml.example': 'not: [valid',
      'notes.txt': 'hello',
      'empty.yaml': '',
    });
    expect(p.dataSources.map((d) => d.name)).toEqual(['first', 'second']);
    expect(p.files.map((f) => f.split('/').pop())).toEqual(['a.yaml', 'b.yml', 'empty.yaml']);
  });

  it('keeps the shipped example valid (and unread, by its extension)', async () => {
    const text = await readFile(join(root, 'provisioning/datasources/sample.yaml.example'), 'utf8');
    const p = await plan({ 'sample.yaml': text }, { LOKI_URL: 'http://loki:3100', LOKI_PASSWORD: 'pw' });
    expect(p.warnings).toEqual([]);
    expect(p.dataSources.map((d) => [d.name, d.editable, d.url])).toEqual([['Prometheus', false, 'http://prometheus:9090'], ['Loki', true, 'http://loki:3100']]);
    expect((await readDataSourceProvisioning(join(root, 'provisioning'), {})).files).toEqual([]);
  });

  it('treats a missing folder as nothing to provision', async () => {
    expect(await readDataSourceProvisioning(join(dir, 'does-not-exist'), {})).toEqual({ files: [], deletions: [], dataSources: [], warnings: [] });
  });

  it('warns about unknown keys and a missing apiVersion without failing', async () => {
    const p = await plan({ 'a.yaml': 'datasources:\n  - name: x\n    type: loki\n    isdefault: true\n' });
    expect(p.dataSources).toHaveLength(1);
    expect(p.warnings).toEqual([
      expect.stringMatching(/a\.yaml:1:1: no apiVersion/),
      expect.stringMatching(/a\.yaml:4:5: unknown key datasources\[0\]\.isdefault ignored/),
    ]);
  });

  it('names the file and line of a YAML syntax error', async () => {
    const error = await failure({ 'ok.yaml': 'apiVersion: 1\n', 'broken.yaml': 'apiVersion: 1\ndatasources:\n  - name: x\n    type: [loki\n' });
    expect(error.message).toMatch(/broken\.yaml:\d+:\d+: invalid YAML/);
    expect(error.origin.file).toMatch(/broken\.yaml$/);
    expect(error.origin.line).toBeGreaterThanOrEqual(4);
  });

  it('names the file, line and field of a wrong type', async () => {
    const cases: Array<[string, RegExp]> = [
      ['apiVersion: 1\ndatasources:\n  - name: x\n    type: loki\n    orgId: abc\n', /:5:12: datasources\[0\]\.orgId must be an integer, got "abc"/],
      ['apiVersion: 1\ndatasources:\n  - name: x\n    type: loki\n    isDefault: maybe\n', /:5:16: datasources\[0\]\.isDefault must be true or false/],
      ['apiVersion: 1\ndatasources:\n  - name: x\n    type: loki\n    jsonData: [1, 2]\n', /:5:15: datasources\[0\]\.jsonData must be a mapping/],
      ['apiVersion: 1\ndatasources:\n  - name: x\n    type: loki\n    url: { a: 1 }\n', /:5:10: datasources\[0\]\.url must be a single value, not a mapping/],
      ['apiVersion: 1\ndatasources:\n  - name: x\n    type: loki\n    secureJsonData:\n      token: [a]\n', /:6:14: datasources\[0\]\.secureJsonData\.token must be a single value/],
      ['apiVersion: 1\ndatasources: { name: x }\n', /:2:14: datasources must be a list/],
      ['apiVersion: 1\ndatasources:\n  - just-a-string\n', /:3:5: datasources\[0\] must be a mapping/],
      ['apiVersion: 2\n', /:1:13: unsupported apiVersion/],
      ['- a\n- b\n', /:1:1: expected a mapping/],
      ['apiVersion: 1\ndeleteDatasources:\n  - orgId: 1\n', /:3:5: deleteDatasources\[0\]: name is required/],
    ];
    for (const [text, pattern] of cases) {
      const error = await failure({ 'bad.yaml': text });
      expect(error.message).toMatch(/bad\.yaml:\d+:\d+: /);
      expect(error.message).toMatch(pattern);
    }
  });

  it('requires name and type, naming the entry', async () => {
    expect((await failure({ 'a.yaml': 'apiVersion: 1\ndatasources:\n  - type: loki\n' })).message).toMatch(/a\.yaml:3:5: datasources\[0\]: name is required/);
    expect((await failure({ 'a.yaml': 'apiVersion: 1\ndatasources:\n  - name: ok\n    type: loki\n  - name: typeless\n' })).message)
      .toMatch(/a\.yaml:5:5: datasources\[1\] \(typeless\): type is required/);
  });

  it('refuses two declarations of one name and two defaults in one org, across files', async () => {
    const dup = await failure({ 'a.yaml': 'apiVersion: 1\ndatasources: [{ name: x, type: loki }]\n', 'b.yaml': 'apiVersion: 1\ndatasources:\n  - { name: x, type: tempo }\n' });
    expect(dup.message).toMatch(/b\.yaml:3:5: data source "x" of org 1 is already declared at .*a\.yaml:2:15/);
    const defaults = await failure({ 'a.yaml': 'apiVersion: 1\ndatasources:\n  - { name: x, type: loki, isDefault: true }\n  - { name: y, type: loki, isDefault: true }\n' });
    expect(defaults.message).toMatch(/a\.yaml:4:5: only one data source per organization can be marked as default/);
    // Same name in different orgs is fine.
    expect((await plan({ 'a.yaml': 'apiVersion: 1\ndatasources:\n  - { name: x, type: loki }\n  - { name: x, type: loki, orgId: 2 }\n' })).dataSources).toHaveLength(2);
  });
});

describe('applying provisioning', () => {
  const dsFile = (extra = '', url = 'http://loki:3100') => `apiVersion: 1
datasources:
  - name: prov-loki
    type: loki
    url: ${url}
    secureJsonData:
      httpHeaderValue1: PROV-SECRET-VALUE
    jsonData:
      httpHeaderName1: X-Scope
      maxLines: 100
${extra}`;

  it('creates read-only data sources with encrypted secrets, and a second run changes nothing', async () => {
    const p = await plan({ 'a.yaml': dsFile() });
    expect(await apply(p)).toEqual({ created: 1, updated: 0, unchanged: 0, deleted: 0, pruned: 0, outdated: [] });

    const [row] = await server.sql<{ id: number; version: number; read_only: boolean; updated: Date; secure_json_data: unknown }>(
      "select id, version, read_only, updated, secure_json_data from data_source where name = 'prov-loki'");
    expect(row).toMatchObject({ version: 1, read_only: true });
    expect(JSON.stringify(row!.secure_json_data)).not.toContain('PROV-SECRET-VALUE');
    const shown = await call(server, 'GET', `/api/datasources/${row!.id}`);
    expect(shown.body).toMatchObject({ name: 'prov-loki', readOnly: true, secureJsonFields: { httpHeaderValue1: true }, jsonData: { httpHeaderName1: 'X-Scope', maxLines: 100 } });
    expect(shown.text).not.toContain('PROV-SECRET-VALUE');
    const stored = await server.app.services.dataSources.get(server.orm.em.fork(), 1, { id: row!.id });
    expect(server.app.services.dataSources.decryptSecrets(stored)).toEqual({ httpHeaderValue1: 'PROV-SECRET-VALUE' });

    expect(await apply(await plan({ 'a.yaml': dsFile() }))).toEqual({ created: 0, updated: 0, unchanged: 1, deleted: 0, pruned: 0, outdated: [] });
    const [again] = await server.sql<{ version: number; updated: Date; secure_json_data: unknown }>("select version, updated, secure_json_data from data_source where name = 'prov-loki'");
    expect(again!.version).toBe(1);
    expect(again!.updated).toEqual(row!.updated);
    expect(again!.secure_json_data).toEqual(row!.secure_json_data); // not even re-encrypted

    const update = await call(server, 'PUT', `/api/datasources/${row!.id}`, { body: { name: 'prov-loki', type: 'loki', access: 'proxy', url: 'http://elsewhere' } });
    expect(update.status).toBe(403);
    expect(update.body).toEqual({ message: 'Cannot update read-only data source' });
    for (const path of [`/api/datasources/${row!.id}`, '/api/datasources/name/prov-loki']) {
      const del = await call(server, 'DELETE', path);
      expect(del.status).toBe(403);
      expect(del.body).toEqual({ message: 'Cannot delete read-only data source' });
    }
  });

  it('updates a changed declaration, secrets included, and then leaves it alone', async () => {
    expect(await apply(await plan({ 'a.yaml': dsFile('', 'http://loki-2:3100').replace('PROV-SECRET-VALUE', 'ROTATED') }))).toMatchObject({ updated: 1 });
    const [row] = await server.sql<{ id: number; url: string; version: number }>("select id, url, version from data_source where name = 'prov-loki'");
    expect(row).toMatchObject({ url: 'http://loki-2:3100', version: 1 });
    const stored = await server.app.services.dataSources.get(server.orm.em.fork(), 1, { id: row!.id });
    expect(server.app.services.dataSources.decryptSecrets(stored)).toEqual({ httpHeaderValue1: 'ROTATED' });
    expect(await apply(await plan({ 'a.yaml': dsFile('', 'http://loki-2:3100').replace('PROV-SECRET-VALUE', 'ROTATED') }))).toMatchObject({ unchanged: 1 });
  });

  it('lets API edits of an editable data source survive until the declared version is raised', async () => {
    const file = (version: number, url: string) => `apiVersion: 1\ndatasources:\n  - { name: prov-editable, type: tempo, url: "${url}", editable: true, version: ${version} }\n`;
    expect(await apply(await plan({ 'a.yaml': file(1, 'http://tempo-a') }))).toMatchObject({ created: 1 });
    const [row] = await server.sql<{ id: number; read_only: boolean }>("select id, read_only from data_source where name = 'prov-editable'");
    expect(row!.read_only).toBe(false);
    const edited = await call(server, 'PUT', `/api/datasources/${row!.id}`, { body: { name: 'prov-editable', type: 'tempo', access: 'proxy', url: 'http://edited', version: 1 } });
    expect(edited.status).toBe(200);
    expect(edited.body.datasource.version).toBe(2);

    const skipped = await apply(await plan({ 'a.yaml': file(1, 'http://tempo-b') }));
    expect(skipped.outdated).toEqual([expect.stringMatching(/a\.yaml:3:5: data source "prov-editable" declares version 1, older than the stored one/)]);
    expect((await call(server, 'GET', `/api/datasources/${row!.id}`)).body).toMatchObject({ url: 'http://edited', version: 2 });

    expect(await apply(await plan({ 'a.yaml': file(2, 'http://tempo-b') }))).toMatchObject({ updated: 1 });
    expect((await call(server, 'GET', `/api/datasources/${row!.id}`)).body).toMatchObject({ url: 'http://tempo-b', version: 3 });
    // The same file again: the stored version is now above the declared one, but nothing differs, so no warning.
    expect(await apply(await plan({ 'a.yaml': file(2, 'http://tempo-b') }))).toEqual({ created: 0, updated: 0, unchanged: 1, deleted: 0, pruned: 0, outdated: [] });
  });

  it('makes a declared default the only default of its org', async () => {
    const created = await call(server, 'POST', '/api/datasources', { body: { name: 'api-default', type: 'loki', access: 'proxy', isDefault: true } });
    expect(created.status).toBe(200);
    await apply(await plan({ 'a.yaml': 'apiVersion: 1\ndatasources:\n  - { name: prov-default, type: prometheus, isDefault: true }\n' }));
    const defaults = await server.sql<{ name: string }>('select name from data_source where org_id = 1 and is_default');
    expect(defaults).toEqual([{ name: 'prov-default' }]);
    expect(await apply(await plan({ 'a.yaml': 'apiVersion: 1\ndatasources:\n  - { name: prov-default, type: prometheus, isDefault: true }\n' }))).toMatchObject({ unchanged: 1 });
  });

  it('deletes what deleteDatasources names, read-only or not, and ignores names that do not exist', async () => {
    const p = await plan({ 'a.yaml': 'apiVersion: 1\ndeleteDatasources:\n  - name: prov-loki\n  - name: prov-editable\n    orgId: 1\n  - name: never-existed\n' });
    expect(await apply(p)).toMatchObject({ deleted: 2 });
    expect(await server.sql("select 1 from data_source where name in ('prov-loki', 'prov-editable')")).toEqual([]);
  });

  it('fails on an unknown org or a value the API would refuse, naming the line, and applies nothing', async () => {
    const unknownOrg = await plan({ 'a.yaml': 'apiVersion: 1\ndatasources:\n  - { name: fine, type: loki }\n  - { name: orphan, type: loki, orgId: 42 }\n' });
    const error = await apply(unknownOrg).then(() => null, (e: unknown) => e as Error);
    expect(error).toBeInstanceOf(ProvisioningError);
    expect(error!.message).toMatch(/a\.yaml:4:5: data source "orphan": organization 42 does not exist/);

    const badUrl = await plan({ 'a.yaml': 'apiVersion: 1\ndatasources:\n  - { name: fine, type: loki }\n  - { name: bad-url, type: loki, url: "http://exa mple:99999" }\n' });
    const urlError = await apply(badUrl).then(() => null, (e: unknown) => e as Error);
    expect(urlError!.message).toMatch(/a\.yaml:4:5: data source "bad-url": Validation error, invalid URL/);
    // All or nothing: "fine" came before the failure and was rolled back.
    expect(await server.sql("select 1 from data_source where name = 'fine'")).toEqual([]);
  });
});
