import { createWriteStream } from 'node:fs';
import { request as httpRequest } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import fc from 'fast-check';
import { YogaServer, type Plugin } from 'graphql-yoga';
import { loadSettings } from '../../../src/config/settings.ts';
import { DirectPath, directParams } from '../../../src/graphql/direct-path.ts';
import { CSRF_PREVENTION } from '../../../src/graphql/protection.ts';
import { getPublicSchema } from '../../../src/graphql/schema/index.ts';
import { createYogaHandler } from '../../../src/graphql/yoga-server.ts';
import { createLogger } from '../../../src/logging/logger.ts';
import { ADMIN, call, startTestServer, type Overrides, type TestServer } from '../../support/server.ts';

// A JSON POST of one operation is served by the direct path (src/graphql/direct-path.ts), every
// other request by yoga's HTTP pipeline. Clients must not be able to tell: each request below goes
// to a server with the direct path and to one without it (on the same database), and the two
// answers must be the same bytes: status line, headers in order and spelling, and body.

interface Pair {
  direct: TestServer;
  yoga: TestServer;
}

async function startPair(overrides: Overrides = {}): Promise<Pair> {
  const direct = await startTestServer({ overrides });
  const yoga = await startTestServer({ overrides, connection: direct.connection, app: { graphqlDirectPath: false } });
  return { direct, yoga };
}

let defaults: Pair;
const LONG_PAGE = 140;
let flipped: Pair;
let id: number;

beforeAll(async () => {
  [defaults, flipped] = await Promise.all([
    startPair(),
    // Masking off, CSRF prevention off, introspection off, tight limits.
    startPair({ graphql: { introspection: 'false', max_depth: '3', max_aliases: '2', max_cost: '60', mask_errors: 'false', csrf_prevention: 'false' } }),
  ]);
  const created = await call(defaults.direct, 'POST', '/api/datasources', {
    body: { name: 'direct-prom', type: 'prometheus', access: 'proxy', url: 'http://prom:9090', basicAuth: true, basicAuthUser: 'u', jsonData: { a: [1, 'two', null] }, secureJsonData: { basicAuthPassword: 'DIRECT-CANARY' } },
  });
  id = created.body.id as number;
  // A page long enough to be encoded item by item (src/net/json-encode.ts).
  for (let i = 0; i < LONG_PAGE; i++) await call(defaults.direct, 'POST', '/api/datasources', { body: { name: `direct-page-${i} ✓`, type: 'loki', access: 'proxy', url: `http://loki-${i}:3100`, jsonData: { n: i } } });
  await call(flipped.direct, 'POST', '/api/datasources', { body: { name: 'flipped-loki', type: 'loki', access: 'proxy', url: 'http://loki:3100' } });
});
afterAll(async () => {
  for (const pair of [defaults, flipped]) {
    await pair?.yoga.close();
    await pair?.direct.close();
  }
});

interface Sent {
  method?: string;
  path?: string;
  headers?: Record<string, string>;
  body?: string | Buffer;
}

/** The answer as bytes go: status line, raw headers but Date (which ticks), body. */
function send(server: TestServer, sent: Sent): Promise<string> {
  const url = new URL(sent.path ?? '/graphql', server.url);
  return new Promise((resolve, reject) => {
    const req = httpRequest(url, { method: sent.method ?? 'POST', headers: sent.headers, agent: false }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (chunk: Buffer) => chunks.push(chunk));
      res.on('end', () => {
        const headers: string[] = [];
        for (let i = 0; i < res.rawHeaders.length; i += 2) if (res.rawHeaders[i]!.toLowerCase() !== 'date') headers.push(`${res.rawHeaders[i]}: ${res.rawHeaders[i + 1]}`);
        resolve(`HTTP/${res.httpVersion} ${res.statusCode} ${res.statusMessage}\n${headers.join('\n')}\n\n${Buffer.concat(chunks).toString('utf8')}`);
      });
      res.on('error', reject);
    });
    req.on('error', reject);
    req.end(sent.body);
  });
}

const json = (params: unknown, headers: Record<string, string> = {}): Sent => ({
  headers: { authorization: ADMIN, 'content-type': 'application/json', ...headers },
  body: JSON.stringify(params),
});

const FIELDS = 'id databaseId uid orgId name type typeName access url user database basicAuth basicAuthUser withCredentials isDefault jsonData secureJsonFields version readOnly';

const cases = (): Array<[string, Sent]> => [
  ['one data source, every field', json({ query: `{ currentOrganization { dataSource(databaseId: ${id}) { ${FIELDS} } } }` })],
  ['the list, with variables and an operation name', json({ query: 'query Q($x: Boolean!) { currentOrganization { dataSources { nodes { name url @include(if: $x) } } } }', variables: { x: true }, operationName: 'Q' })],
  ['null variables, operation name and extensions', json({ query: '{ currentOrganization { dataSources { nodes { id } } } }', variables: null, operationName: null, extensions: null })],
  ['an unknown key whose value is null', json({ query: '{ __typename }', documentId: null })],
  ['a domain error (an id that is no global id)', json({ query: '{ node(id: "not-a-global-id") { id } }' })],
  ['a long page, encoded item by item', json({ query: `query($n: Int!) { currentOrganization { dataSources(first: $n) { totalCount nodes { ${FIELDS} } } } }`, variables: { n: LONG_PAGE + 10 } })],
  ['a long page, as application/graphql-response+json', json({ query: `{ currentOrganization { dataSources(first: ${LONG_PAGE + 10}) { nodes { id name } } } }` }, { accept: 'application/graphql-response+json' })],
  ['a partial answer', json({ query: `{ ok: currentOrganization { dataSource(databaseId: ${id}) { id } } missing: currentOrganization { dataSource(uid: "nope") { id } } }` })],
  ['anonymous', json({ query: '{ currentOrganization { dataSources { nodes { id } } } }' }, { authorization: '' })],
  ['a variable of the wrong type', json({ query: 'query($id: Int!) { currentOrganization { dataSource(databaseId: $id) { id } } }', variables: { id: 'seven' } })],
  ['a missing variable', json({ query: 'query($id: Int!) { currentOrganization { dataSource(databaseId: $id) { id } } }', variables: {} })],
  ['an unknown operation name', json({ query: 'query A { __typename } query B { __typename }', operationName: 'C' })],
  ['several operations, none named', json({ query: 'query A { __typename } query B { __typename }' })],
  ['a syntax error', json({ query: '{ currentOrganization { dataSources { nodes { id ' })],
  ['a validation error', json({ query: '{ dataSourcez { id } }' })],
  ['too deep', json({ query: '{ viewer { currentOrganization { dataSources { nodes { id name } } } } }' })],
  ['too many aliases', json({ query: '{ a: currentOrganization { dataSources { nodes { id } } } b: currentOrganization { dataSources { nodes { id } } } c: currentOrganization { dataSources { nodes { id } } } }' })],
  ['too many tokens', json({ query: `{ ${'__typename '.repeat(2100)}}` })],
  ['introspection', json({ query: '{ __schema { queryType { name } } }' })],
  ['a mutation', json({ query: 'mutation { alertsPause(paused: false) { alertsAffected paused } }' })],
  ['a failing mutation', json({ query: 'mutation { dataSourceDelete(uid: "never-was") { deletedDataSourceId userErrors { code message } } }' })],
  ['an unknown parameter', json({ query: '{ __typename }', foo: 1 })],
  ['a query that is not a string', json({ query: 42 })],
  ['no query', json({ variables: {} })],
  ['variables as a list', json({ query: '{ __typename }', variables: [1] })],
  ['extensions as a string', json({ query: '{ __typename }', extensions: 'x' })],
  ['a batch', json([{ query: '{ __typename }' }])],
  ['JSON null', json(null)],
  ['a JSON string', json('{ __typename }')],
  ['malformed JSON', { headers: { authorization: ADMIN, 'content-type': 'application/json' }, body: '{"query": ' }],
  ['a byte order mark', { headers: { authorization: ADMIN, 'content-type': 'application/json' }, body: Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), Buffer.from('{"query":"{ __typename }"}')]) }],
  ['an empty body', { headers: { authorization: ADMIN, 'content-type': 'application/json' }, body: '' }],
  ['charset in the content type', json({ query: '{ currentOrganization { dataSources { nodes { id } } } }' }, { 'content-type': 'application/json; charset=utf-8' })],
  ['a list of content types', json({ query: '{ currentOrganization { dataSources { nodes { id } } } }' }, { 'content-type': 'application/json, text/plain' })],
  ['the content type in capitals', json({ query: '{ __typename }' }, { 'content-type': 'Application/JSON' })],
  ['text/plain (a simple request)', json({ query: '{ __typename }' }, { 'content-type': 'text/plain' })],
  ['text/plain with the CSRF header', json({ query: '{ __typename }' }, { 'content-type': 'text/plain', 'x-graphql-yoga-csrf': '1' })],
  ['application/graphql+json', json({ query: '{ __typename }' }, { 'content-type': 'application/graphql+json' })],
  ['no content type', { headers: { authorization: ADMIN }, body: JSON.stringify({ query: '{ __typename }' }) }],
  ['Accept: application/graphql-response+json', json({ query: '{ node(id: "not-a-global-id") { id } }' }, { accept: 'application/graphql-response+json' })],
  ['Accept: both JSON types', json({ query: '{ dataSourcez }' }, { accept: 'application/graphql-response+json, application/json;q=0.9' })],
  ['Accept: a browser default', json({ query: '{ __typename }' }, { accept: 'text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8' })],
  ['Accept: text/event-stream', json({ query: `{ currentOrganization { dataSource(databaseId: ${id}) { name } } }` }, { accept: 'text/event-stream' })],
  ['Accept: multipart/mixed', json({ query: `{ currentOrganization { dataSource(databaseId: ${id}) { name } } }` }, { accept: 'multipart/mixed' })],
  ['Accept: nothing this server makes', json({ query: '{ __typename }' }, { accept: 'application/xml' })],
  ['Accept: JSON in another charset', json({ query: '{ __typename }' }, { accept: 'application/json; charset=iso-8859-1' })],
  // A stream cannot be answered as one JSON document: 406 (without Accept it would be a stream).
  ['a subscription asked for as JSON', json({ query: 'subscription { alertsPausedChanged { paused } }' }, { accept: 'application/json' })],
  ['a query string', { ...json({ query: '{ __typename }' }), path: '/graphql?x=/health' }],
  ['GET', { method: 'GET', path: `/graphql?query=${encodeURIComponent('{ __typename }')}`, headers: { authorization: ADMIN, 'x-graphql-yoga-csrf': '1' } }],
  ['PUT', { ...json({ query: '{ __typename }' }), method: 'PUT' }],
];

describe('the direct path answers as yoga does', () => {
  for (const [config, pair] of [['defaults', () => defaults], ['every [graphql] switch flipped', () => flipped]] as const) {
    it(`${config}: the same bytes for every request shape`, async () => {
      const { direct, yoga } = pair();
      for (const [name, sent] of cases()) {
        const [viaDirect, viaYoga] = [await send(direct, sent), await send(yoga, sent)];
        expect({ name, answer: viaDirect }).toEqual({ name, answer: viaYoga });
      }
    });
  }

  it('the same bytes for generated Accept and Content-Type headers and params', async () => {
    const mediaType = fc.constantFrom('application/json', 'application/graphql-response+json', '*/*', 'text/event-stream', 'multipart/mixed', 'text/html', 'application/*', 'text/plain', '');
    const accept = fc.array(fc.tuple(mediaType, fc.constantFrom('', ';q=0.5', ';charset=utf-8', ';charset=latin1')), { maxLength: 3 }).map((parts) => parts.map(([type, params]) => type + params).join(', '));
    const contentType = fc.constantFrom('application/json', 'application/json; charset=utf-8', 'application/json;charset=UTF-8', 'application/json, text/plain', 'application/jsonx', 'text/plain', 'multipart/form-data');
    const query = fc.constantFrom(`{ currentOrganization { dataSource(databaseId: ${id}) { name type } } }`, '{ currentOrganization { dataSources { nodes { name } } } }', '{ nope }', '{ currentOrganization { dataSources { nodes { id', 'mutation { alertsPause(paused: false) { paused } }', 'query($n: Int!) { currentOrganization { dataSource(databaseId: $n) { id } } }');
    const params = fc.record({
      query,
      variables: fc.constantFrom(undefined, null, {}, { n: id }, { n: 'x' }, [], 'v'),
      operationName: fc.constantFrom(undefined, null, 'Nope'),
      extensions: fc.constantFrom(undefined, null, {}, 1),
    }, { requiredKeys: ['query'] });
    await fc.assert(fc.asyncProperty(accept, contentType, params, async (acceptValue, type, body) => {
      const sent = json(body, { 'content-type': type, ...(acceptValue ? { accept: acceptValue } : {}) });
      expect(await send(defaults.direct, sent)).toBe(await send(defaults.yoga, sent));
    }), { numRuns: 60 });
  });
});

/** A subscription's answer as bytes go, up to the end of its first event; then the client goes. */
function firstEvent(server: TestServer, sent: Sent): Promise<string> {
  const url = new URL('/graphql', server.url);
  return new Promise((resolve, reject) => {
    const req = httpRequest(url, { method: 'POST', headers: sent.headers, agent: false }, (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => {
        body += chunk;
        const end = body.indexOf('\n\n', body.indexOf('event: next'));
        if (body.includes('event: next') && end >= 0) {
          const headers: string[] = [];
          for (let i = 0; i < res.rawHeaders.length; i += 2) if (res.rawHeaders[i]!.toLowerCase() !== 'date') headers.push(`${res.rawHeaders[i]}: ${res.rawHeaders[i + 1]}`);
          resolve(`HTTP/${res.httpVersion} ${res.statusCode} ${res.statusMessage}\n${headers.join('\n')}\n\n${body.slice(0, end + 2)}`);
          req.destroy();
        }
      });
      res.on('error', () => undefined);
    });
    req.on('error', reject);
    req.end(sent.body);
  });
}

describe('the direct path streams a subscription as yoga does', () => {
  it('the same bytes up to the first event, and the stream ends when the client goes', async () => {
    const created = await call(defaults.direct, 'POST', '/api/datasources', { body: { name: 'direct-testdata', type: 'grafana-testdata-datasource', access: 'proxy' } });
    const uid = created.body.datasource.uid as string;
    // An hour's refresh: both answers are of the same tick.
    const sent = json({
      query: 'subscription($q: [JSONObject!]!) { liveQuery(queries: $q, from: "now-1h", to: "now", refresh: "1h") { viewers results { refId status frames { length fields { name values } } } } }',
      variables: { q: [{ refId: 'A', datasource: { type: 'grafana-testdata-datasource', uid }, scenarioId: 'csv_metric_values', stringInput: '1,20,90,30,5,0' }] },
    }, { accept: 'text/event-stream' });
    const [viaDirect, viaYoga] = await Promise.all([firstEvent(defaults.direct, sent), firstEvent(defaults.yoga, sent)]);
    expect(viaDirect).toContain('event: next\ndata: {"data":{"liveQuery":{"viewers":1,"results":[{"refId":"A","status":200,');
    // The range ends when each subscribes: times may differ by a few milliseconds.
    const times = (answer: string) => answer.replace(/\d{13}/g, 'T');
    expect(times(viaDirect)).toBe(times(viaYoga));
    // Each server's stream ended with its client: no viewer is left.
    const metrics = async (server: TestServer) => (await call(server, 'GET', '/metrics')).text;
    for (let tries = 0; tries < 50 && !/dashgate_live_query_subscribers 0/.test(await metrics(defaults.direct)); tries++) await new Promise((r) => setTimeout(r, 50));
    expect(await metrics(defaults.direct)).toMatch(/dashgate_live_query_subscribers 0/);
  });
});

describe('which requests the direct path takes', () => {
  const body = Buffer.from('{"query":"{ __typename }"}');
  const headers = { 'content-type': 'application/json' };
  const take = (over: Partial<{ method: string; url: string; headers: Record<string, string>; body: Buffer | null; csrf: boolean }> = {}) =>
    directParams(over.method ?? 'POST', over.url ?? '/graphql', over.headers ?? headers, over.body === undefined ? body : over.body, '/graphql', over.csrf ?? true);

  it.each([
    ['a JSON POST of one operation', {}, { query: '{ __typename }' }],
    ['with a charset', { headers: { 'content-type': 'application/json; charset=utf-8' } }, { query: '{ __typename }' }],
    ['the first of a list of content types', { headers: { 'content-type': 'application/json, text/plain' } }, { query: '{ __typename }' }],
    ['with CSRF prevention off', { csrf: false }, { query: '{ __typename }' }],
    ['GET', { method: 'GET' }, null],
    ['PUT', { method: 'PUT' }, null],
    ['a query string', { url: '/graphql?a=1' }, null],
    ['another path', { url: '/graphql/' }, null],
    ['no body', { body: null }, null],
    ['no content type', { headers: {} }, null],
    ['a content type yoga matches case-sensitively', { headers: { 'content-type': 'Application/json' } }, null],
    ['a longer media type', { headers: { 'content-type': 'application/jsonp' } }, null],
    ['application/graphql+json (left to yoga)', { headers: { 'content-type': 'application/graphql+json' } }, null],
    ['a batch', { body: Buffer.from('[{"query":"{ a }"}]') }, null],
    ['JSON null', { body: Buffer.from('null') }, null],
    ['a JSON number', { body: Buffer.from('1') }, null],
    ['malformed JSON', { body: Buffer.from('{') }, null],
    ['a byte order mark', { body: Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), body]) }, null],
  ] as const)('%s', (_name, over, expected) => {
    expect(take(over as never)).toEqual(expected);
  });

  it('is off when a plugin has a request-stage hook it does not run, or hooks execution results', () => {
    const build = (plugins: Plugin[]) => new YogaServer({ schema: getPublicSchema(), plugins, logging: false });
    const over = (plugins: Plugin[]) => DirectPath.over(build(plugins) as never, plugins, () => {});
    expect(over([])).not.toBeNull();
    expect(over([CSRF_PREVENTION])).not.toBeNull();
    expect(over([{ onRequest() {} }])).toBeNull();
    expect(over([{ onRequestParse() {} }])).toBeNull();
    expect(over([{ onExecutionResult() {} }])).toBeNull();
  });

  it('is on for the plugins /graphql runs, in every configuration', () => {
    const log = createLogger('error', createWriteStream('/dev/null'));
    const configs: Overrides[] = [{}, { graphql: { introspection: 'false', csrf_prevention: 'false', mask_errors: 'false' } }];
    for (const overrides of configs) {
      const settings = loadSettings({ argv: [], env: {}, overrides });
      expect(createYogaHandler(settings, log).servesDirectly).toBe(true);
      expect(createYogaHandler(settings, log, { directPath: false }).servesDirectly).toBe(false);
      for (const mode of ['allow', 'only'] as const) {
        const trusted = { ...settings, graphql: { ...settings.graphql, trustedDocuments: mode } };
        expect(createYogaHandler(trusted, log, { trustedDocuments: { byHash: new Map(), hashByText: new Map() } }).servesDirectly).toBe(true);
      }
    }
  });
});
