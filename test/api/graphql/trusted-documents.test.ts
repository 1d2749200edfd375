import { createHash } from 'node:crypto';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { createClient, CreateDataSourceMutation, DataSourcesQuery, listDataSources, subscribe } from '../../../examples/typed-client/src/client.ts';
import { DataSourceChangedSubscription } from '../../../examples/typed-client/src/live.ts';
import { loadTrustedDocuments } from '../../../src/graphql/trusted-documents.ts';
import { getPublicSchema } from '../../../src/graphql/schema/index.ts';
import { ADMIN, call, startTestServer, type TestServer } from '../../support/server.ts';

const root = fileURLToPath(new URL('../../..', import.meta.url));
/** The manifest the typed client example generates (`npm run codegen`). */
const MANIFEST_DIR = join(root, 'examples/typed-client/src/gql');
const manifest = JSON.parse(readFileSync(join(MANIFEST_DIR, 'persisted-documents.json'), 'utf8')) as Record<string, string>;
const [listHash, listText] = Object.entries(manifest).find(([, text]) => text.startsWith('query DataSources('))!;

const sha256 = (text: string) => createHash('sha256').update(text).digest('hex');
const OTHER = '{ currentOrganization { dataSources { nodes { name } } } }';

let only: TestServer;
let allow: TestServer;
let off: TestServer;

beforeAll(async () => {
  only = await startTestServer({ overrides: { graphql: { trusted_documents: 'only', trusted_documents_path: MANIFEST_DIR } } });
  [allow, off] = await Promise.all([
    startTestServer({ connection: only.connection, overrides: { graphql: { trusted_documents: 'allow', trusted_documents_path: MANIFEST_DIR } } }),
    startTestServer({ connection: only.connection }),
  ]);
});
afterAll(async () => {
  await off?.close();
  await allow?.close();
  await only?.close();
});

const post = (server: TestServer, body: unknown) => call(server, 'POST', '/graphql', { body });

describe('[graphql] trusted_documents = only', () => {
  it('runs the typed client example\'s documents sent by hash, queries, mutations and subscriptions alike', async () => {
    const client = createClient({ url: only.url, authorization: ADMIN, persisted: true });
    const created = await client(CreateDataSourceMutation, { input: { name: 'trusted', type: 'prometheus', access: 'proxy', url: 'http://127.0.0.1:9090' } });
    expect(created.dataSourceCreate).toMatchObject({ dataSource: { name: 'trusted' }, userErrors: [] });
    expect((await listDataSources(client)).map((ds) => ds.name)).toContain('trusted');

    const events: unknown[] = [];
    const opened = new Promise<void>((resolve, reject) => {
      const stop = subscribe({ url: only.url, authorization: ADMIN, persisted: true }, DataSourceChangedSubscription, {}, {
        open: resolve,
        next: (data) => {
          events.push(data);
          stop();
        },
        error: reject,
      });
    });
    await opened;
    await call(only, 'DELETE', '/api/datasources/name/trusted');
    const deadline = Date.now() + 5000;
    while (events.length === 0 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
    expect(events).toEqual([{ dataSourceChanged: { kind: 'DELETED', dataSourceId: created.dataSourceCreate.dataSource!.id, dataSource: null } }]);
  });

  it('accepts the hash in Apollo\'s extension and as documentId (prefix optional, on GET too)', async () => {
    const bare = listHash.replace(/^sha256:/, '');
    expect((await post(only, { extensions: { persistedQuery: { version: 1, sha256Hash: bare } } })).body).toEqual({ data: { viewer: { currentOrganization: { dataSources: expect.objectContaining({ nodes: expect.any(Array) }) } } } });
    expect((await post(only, { documentId: bare })).status).toBe(200);
    const get = await call(only, 'GET', `/graphql?documentId=${encodeURIComponent(listHash)}`, { headers: { 'x-graphql-yoga-csrf': '1' } });
    expect(get.status).toBe(200);
    expect(get.body.data.viewer.currentOrganization.dataSources.nodes).toEqual(expect.any(Array));
    // The manifest's exact text counts as the document itself.
    expect((await post(only, { query: listText })).status).toBe(200);
  });

  it('refuses anything else with the persisted-query error codes', async () => {
    const other = await post(only, { query: OTHER });
    expect(other.status).toBe(400);
    expect(other.body).toEqual({ errors: [{ message: 'PersistedQueryNotInList', extensions: { code: 'PERSISTED_QUERY_NOT_IN_LIST' } }] });
    // The typed client's own text differs from the manifest's normalized print: it must use the hash.
    expect((await post(only, { query: DataSourcesQuery.toString() })).body.errors[0].extensions.code).toBe('PERSISTED_QUERY_NOT_IN_LIST');

    const unknown = await post(only, { documentId: `sha256:${sha256(OTHER)}` });
    expect(unknown.status).toBe(400);
    expect(unknown.body).toEqual({ errors: [{ message: 'PersistedQueryNotFound', extensions: { code: 'PERSISTED_QUERY_NOT_FOUND' } }] });
    const unknownApollo = await post(only, { extensions: { persistedQuery: { version: 1, sha256Hash: sha256(OTHER) } } });
    expect(unknownApollo.body.errors[0].extensions.code).toBe('PERSISTED_QUERY_NOT_FOUND');

    const neither = await post(only, { variables: {} });
    expect(neither.status).toBe(400);
    expect(neither.body).toEqual({ errors: [{ message: 'PersistedQueryIdRequired', extensions: { code: 'PERSISTED_QUERY_ID_REQUIRED' } }] });

    // Subscriptions too, and introspection: GraphiQL's own documents are not trusted.
    const sse = await call(only, 'POST', '/graphql', { headers: { accept: 'text/event-stream' }, body: { query: 'subscription { alertsPausedChanged { paused } }' } });
    expect(sse.status).toBe(400);
    expect(sse.text).toContain('PERSISTED_QUERY_NOT_IN_LIST');
    expect((await post(only, { query: '{ __schema { queryType { name } } }' })).body.errors[0].extensions.code).toBe('PERSISTED_QUERY_NOT_IN_LIST');
  });

  it('leaves REST alone: its operations are the server\'s own', async () => {
    const created = await call(only, 'POST', '/api/datasources', { body: { name: 'rest-under-only', type: 'loki', access: 'proxy' } });
    expect(created.status).toBe(200);
    expect((await call(only, 'GET', '/api/datasources/name/rest-under-only')).body).toMatchObject({ name: 'rest-under-only', type: 'loki' });
    expect((await call(only, 'DELETE', '/api/datasources/name/rest-under-only')).status).toBe(200);
  });
});

describe('[graphql] trusted_documents = allow and off', () => {
  it('allow: hashes and any document both run; an unknown hash is PERSISTED_QUERY_NOT_FOUND', async () => {
    expect((await post(allow, { documentId: listHash })).body.data.viewer.currentOrganization.dataSources.nodes).toEqual(expect.any(Array));
    expect((await post(allow, { query: OTHER })).body.data.currentOrganization.dataSources.nodes).toEqual(expect.any(Array));
    expect((await post(allow, { documentId: sha256(OTHER) })).body.errors[0].extensions.code).toBe('PERSISTED_QUERY_NOT_FOUND');
    const neither = await post(allow, {});
    expect(neither.status).toBe(400);
    expect(neither.body.errors[0]).toMatchObject({ message: 'Must provide query string.' });
  });

  it('off: only documents sent whole', async () => {
    expect((await post(off, { query: OTHER })).status).toBe(200);
    const byHash = await post(off, { documentId: listHash });
    expect(byHash.status).toBe(400);
    expect(byHash.body.errors[0].message).toBe('Unexpected parameter "documentId" in the request body.');
    expect((await post(off, { extensions: { persistedQuery: { version: 1, sha256Hash: listHash } } })).body.errors[0].message).toBe('Must provide query string.');
  });
});

describe('manifests', () => {
  let dir: string;
  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'dashgate-trusted-'));
  });
  afterAll(() => rm(dir, { recursive: true, force: true }));

  async function manifestError(content: unknown): Promise<string> {
    await writeFile(join(dir, 'app.json'), typeof content === 'string' ? content : JSON.stringify(content));
    try {
      loadTrustedDocuments(dir, getPublicSchema());
      return 'loaded';
    } catch (error) {
      return (error as Error).message;
    }
  }

  it('loads every *.json in the folder, hashes checked and documents validated, or names the file and key that is wrong', async () => {
    const good = '{ currentOrganization { dataSources { nodes { id } } } }';
    await writeFile(join(dir, 'other.json'), JSON.stringify({ [`sha256:${sha256(good)}`]: good }));
    await writeFile(join(dir, 'notes.txt'), 'ignored');
    expect(await manifestError({ [sha256(OTHER)]: OTHER })).toBe('loaded');
    expect([...loadTrustedDocuments(dir, getPublicSchema()).byHash.keys()].sort()).toEqual([sha256(OTHER), sha256(good)].sort());

    expect(await manifestError('{"broken"')).toMatch(/app\.json: not a JSON manifest/);
    expect(await manifestError(['x'])).toMatch(/app\.json: expected an object/);
    const sha1 = createHash('sha1').update(OTHER).digest('hex');
    expect(await manifestError({ [sha1]: OTHER })).toBe(`${join(dir, 'app.json')}: ${sha1}: keys must be the document's SHA-256 in hex (client preset: persistedDocuments.hashAlgorithm 'sha256')`);
    expect(await manifestError({ [sha256('x')]: OTHER })).toMatch(/app\.json: [0-9a-f]{64}: the key is not the SHA-256 of its document$/);
    const stale = '{ currentOrganization { dataSources { nodes { noSuchField } } } }';
    expect(await manifestError({ [sha256(stale)]: stale })).toMatch(/app\.json: [0-9a-f]{64}: Cannot query field "noSuchField" on type "DataSource"\. \(regenerate the manifest against this server's schema\)$/);
    expect(() => loadTrustedDocuments(join(dir, 'missing'), getPublicSchema())).toThrow(`[graphql] trusted_documents_path ${join(dir, 'missing')}: no such folder`);
  });

  it('a server whose manifests are wrong does not start', async () => {
    const stale = '{ currentOrganization { dataSources { nodes { noSuchField } } } }';
    await writeFile(join(dir, 'app.json'), JSON.stringify({ [sha256(stale)]: stale }));
    await expect(startTestServer({ connection: only.connection, overrides: { graphql: { trusted_documents: 'only', trusted_documents_path: dir } } })).rejects.toThrow(/noSuchField/);
  });
});
