import fc from 'fast-check';
import {
  getNamedType, GraphQLBoolean, GraphQLFloat, GraphQLID, GraphQLInt, GraphQLString, isEnumType, isInputObjectType, isListType,
  isNonNullType, print, type GraphQLInputType,
} from 'graphql';
import { getSchema } from '../../src/graphql/schema/index.ts';
import { compileRestOperation } from '../../src/rest/executor.ts';
import { FRAGMENTS, ROUTES, type RestRoute } from '../../src/http/routes.ts';
import { parseJson, STACK_TRACE, type RawReply, type RawRequest } from './helpers.ts';

/**
 * Generated hostile requests against every REST route (read from the route table, so new routes
 * are fuzzed without touching this file), `/graphql` (with the REST operations' own documents and
 * generated variables) and the data source proxy.
 */
export interface FuzzContext {
  /** Basic credentials of a server admin, so bodies get past authentication and into the handlers. */
  adminAuth: string;
  /** A token of an org Admin. */
  tokenAuth: string;
  /**
   * Basic credentials of a plain user, sent instead of the admin's to the routes that change the
   * caller itself (its login, password, current org): a fuzzed rename of the admin would end the run.
   */
  selfAuth: string;
  /** An existing data source that reads and updates may hit (never deletes). */
  dataSource: { id: number; uid: string; name: string };
}

export interface FuzzCase {
  target: 'rest' | 'graphql' | 'proxy' | 'unknown';
  label: string;
  request: RawRequest;
  /** A body of this many bytes, made only when sent (thousands of big buffers would not fit in memory). */
  bigBody?: number;
}

const REST_ROUTES = ROUTES.filter((r): r is RestRoute => r.kind === 'rest');
/** Routes that change the signed-in user itself. */
const changesCaller = (route: RestRoute) => route.access.kind === 'user' && route.method !== 'GET';
/** The admin's credentials swapped for the plain user's on requests that would change the caller. */
const callerSafe = (ctx: FuzzContext, headers: Record<string, string>, changes: boolean) =>
  (changes && headers.authorization === ctx.adminAuth ? { ...headers, authorization: ctx.selfAuth } : headers);
const compiled = new Map(REST_ROUTES.map((r) => [r, compileRestOperation(getSchema(), { source: r.document, at: r.at, currentOrg: r.currentOrg, gate: r.gate }, FRAGMENTS)]));

// ---------------------------------------------------------------------------------------------
// JSON fragments. Bodies are assembled as text so that they can carry what JSON.stringify never
// writes: own `__proto__` keys, nesting deeper than any recursive serialiser survives, NULs.

const hostileStrings = fc.constantFrom(
  '', ' ', 'a\u0000b', '\u0000', '\ud800', '\udfff\ud800', '\ufeff', '\u202e', 'x'.repeat(300), 'y'.repeat(70_000), '😀',
  'http://[::1', 'http://[', 'javascript:alert(1)', '//evil', 'localhost:5432', 'http://user:pw@host/', '../../etc/passwd',
  "'; drop table data_source; --", '$1', '%s%n', '{{7*7}}', '<script>', '__proto__', 'constructor', 'Admin', 'Viewer', 'NaN',
);
const anyString = fc.oneof({ weight: 3, arbitrary: fc.string({ maxLength: 40 }) }, { weight: 1, arbitrary: fc.string({ unit: 'binary', maxLength: 20 }) }, { weight: 2, arbitrary: hostileStrings });
// Never 1..9999: generated ids must not hit the rows the run depends on (its admin, token, data source).
const awayFromRealIds = (n: number) => (n >= 1 && n < 10_000 ? n + 10_000 : n);
const numbers = fc.oneof(fc.integer(), fc.constantFrom(0, -1, 2 ** 31, -(2 ** 31) - 1, 2 ** 53, 1.5, 1e308, -0), fc.double({ noNaN: true })).map(awayFromRealIds);
const text = (value: unknown) => JSON.stringify(value);

const scalarJson = fc.oneof(anyString.map(text), numbers.map(text), fc.boolean().map(text), fc.constant('null'), fc.constantFrom('1e999', '-1e999', '0.0000000000000000000001', '123456789012345678901234567890'));
const deepJson = fc.tuple(fc.integer({ min: 20, max: 30_000 }), fc.constantFrom('array', 'object', 'mixed')).map(([depth, shape]) =>
  shape === 'array' ? `${'['.repeat(depth)}${']'.repeat(depth)}` : shape === 'object' ? `${'{"a":'.repeat(depth)}1${'}'.repeat(depth)}` : `${'{"a":['.repeat(depth)}1${']}'.repeat(depth)}`,
);
const hostileKey = fc.constantFrom('__proto__', 'constructor', 'prototype', 'toString', 'valueOf', 'hasOwnProperty', '__defineGetter__', 'then', '', '\u0000', 'id', 'orgId', 'isAdmin', 'isServiceAdmin', 'version', 'readOnly');
const pollution = fc.constantFrom('{"isAdmin":true,"polluted":1}', '{"prototype":{"polluted":1}}', '{"toString":"x"}', '[]', 'null');
const jsonText: fc.Arbitrary<string> = fc.letrec<{ value: string }>((tie) => ({
  value: fc.oneof(
    { depthSize: 'small', withCrossShrink: true },
    { weight: 4, arbitrary: scalarJson },
    { weight: 1, arbitrary: fc.array(tie('value'), { maxLength: 4 }).map((items) => `[${items.join(',')}]`) },
    { weight: 1, arbitrary: fc.array(fc.tuple(fc.oneof(hostileKey, fc.string({ maxLength: 8 })), tie('value')), { maxLength: 4 }).map(objectText) },
  ),
})).value;
const wrongValue = fc.oneof({ weight: 6, arbitrary: jsonText }, { weight: 1, arbitrary: deepJson }, { weight: 1, arbitrary: pollution });

function objectText(entries: Array<[string, string]>): string {
  return `{${entries.map(([key, value]) => `${JSON.stringify(key)}:${value}`).join(',')}}`;
}

/** Varies a field name's case: the REST face matches body keys case-insensitively. */
const keyCase = (name: string) => fc.constantFrom(name, name.toUpperCase(), name.toLowerCase(), name[0]!.toUpperCase() + name.slice(1));

/** A value for a GraphQL input type, as JSON text: mostly well-typed, often not. */
function valueFor(type: GraphQLInputType, depth = 0): fc.Arbitrary<string> {
  if (isNonNullType(type)) return fc.oneof({ weight: 8, arbitrary: valueFor(type.ofType, depth) }, { weight: 1, arbitrary: fc.constant('null') });
  let typed: fc.Arbitrary<string>;
  if (isListType(type)) typed = fc.array(valueFor(type.ofType, depth + 1), { maxLength: 3 }).map((items) => `[${items.join(',')}]`);
  else if (isInputObjectType(type)) {
    if (depth > 3) return fc.constant('{}');
    const fields = Object.values(type.getFields()).map((field) =>
      fc.option(fc.tuple(keyCase(field.name), valueFor(field.type, depth + 1)), { freq: 3, nil: null }));
    const extras = fc.array(fc.tuple(hostileKey, wrongValue), { maxLength: 2 });
    typed = fc.tuple(fc.tuple(...fields), extras).map(([present, extra]) => objectText([...present.filter((f): f is [string, string] => f !== null), ...extra]));
  } else if (isEnumType(type)) typed = fc.oneof(fc.constantFrom(...type.getValues().map((v) => v.name)), anyString).map(text);
  else if (type === GraphQLInt) typed = fc.oneof(fc.integer({ min: 10_000, max: 2 ** 31 - 1 }), numbers).map(text);
  else if (type === GraphQLFloat) typed = numbers.map(text);
  else if (type === GraphQLBoolean) typed = fc.boolean().map(text);
  else if (type === GraphQLString || type === GraphQLID) typed = anyString.map(text);
  else if (type.name === 'JSONObject' || type.name === 'JSON') {
    typed = fc.oneof(
      { weight: 4, arbitrary: fc.array(fc.tuple(fc.oneof(hostileKey, fc.string({ maxLength: 12 })), jsonText), { maxLength: 5 }).map(objectText) },
      { weight: 1, arbitrary: deepJson.map((deep) => `{"nested":${deep}}`) },
      { weight: 1, arbitrary: fc.constantFrom('{"a\\u0000":"1"}', '{"k":"v\\u0000"}', '{"httpHeaderName1":"Authorization"}', '{"keepCookies":[1,{"a":2}],"timeout":-1}') },
    );
  } else typed = anyString.map(text);
  return fc.oneof({ weight: 5, arbitrary: typed }, { weight: 1, arbitrary: wrongValue });
}

// ---------------------------------------------------------------------------------------------
// Paths, headers, bodies.

/** Raw path segments: the client sends latin-1 bytes as they are (invalid UTF-8 on the wire). */
const latin1Segment = fc.uint8Array({ minLength: 1, maxLength: 8 }).map((bytes) =>
  Buffer.from(bytes.map((b) => (b < 0x21 || b === 0x3f || b === 0x23 || b === 0x2f || b === 0x7f ? 0x80 + (b % 0x7f) : b))).toString('latin1'));
const oddSegment = fc.oneof(
  { weight: 3, arbitrary: fc.constantFrom(
    '0', '-1', '2147483647', '2147483648', '-2147483649', '99999999999999999999', '1e3', '0x1f', '1.5', '%201', '1%20', '+1', '000010001',
    'NaN', 'Infinity', 'null', 'undefined', 'true', '__proto__', 'constructor', 'prototype', '..', '.', '%', '%%', '%zz', '%00', 'a%00b',
    '%ff', '%C0%AF', '%E0%A4%A', '%2F', '%2e%2e', '%F0%9F%98%80', '%27%20or%201=1%20--', '$1', ';', 'uid', 'name', 'id', 'proxy', 'x'.repeat(4000),
  ) },
  { weight: 3, arbitrary: fc.string({ maxLength: 30 }).map(encodeURIComponent) },
  { weight: 2, arbitrary: fc.integer({ min: 10_000, max: 2 ** 31 - 1 }).map(String) },
  { weight: 1, arbitrary: latin1Segment },
);

const contentTypes = fc.constantFrom(
  'application/json', 'application/json; charset=utf-8', 'application/json;charset=latin1', 'APPLICATION/JSON', 'text/plain', '',
  'application/x-www-form-urlencoded', 'multipart/form-data; boundary=xyz', 'application/jsonx', 'application/graphql',
  'application/graphql-response+json', 'text/html', 'application/json, text/plain', ';', 'application/json; boundary="',
);

function authorization(ctx: FuzzContext): fc.Arbitrary<string | undefined> {
  const base64 = (s: string) => Buffer.from(s, 'latin1').toString('base64');
  return fc.oneof(
    { weight: 30, arbitrary: fc.constant(ctx.adminAuth) },
    { weight: 25, arbitrary: fc.constant(ctx.tokenAuth) },
    { weight: 10, arbitrary: fc.constant(undefined) },
    { weight: 30, arbitrary: fc.oneof(
      fc.constantFrom('Basic', 'Basic ', 'Basic !!!', 'Basic ====', 'Basic YWRtaW4', 'basic Og==', 'Bearer', 'Bearer ', 'Bearer null', 'Digest x',
        'Negotiate abc', 'Bearer glsa_00000000000000000000000000000000_00000000', 'Bearer gl', 'Bearer glsa__', 'Token abc', ' ', 'Basic\tYTpi',
        `Bearer ${'A'.repeat(8000)}`, `Basic ${base64('api_key:')}`, `Basic ${base64('api_key:not-a-key')}`, `Bearer ${base64('{"k":"x","n":"y","id":"1"}')}`,
        `Bearer ${base64('{"k":"x","n":"y","id":1}')}`, `Bearer ${base64('{"__proto__":{"k":"x"}}')}`, `Basic ${base64(':')}`, `Basic ${base64('admin')}`),
      fc.string({ maxLength: 40 }).map((s) => `Bearer ${s.replace(/[^\x20-\x7e]/g, '')}`),
      fc.string({ maxLength: 40 }).map((s) => `Basic ${base64(s)}`),
      latin1Segment.map((s) => `Basic ${s}`),
    ) },
    // Unknown users cost an argon2 verification each (no login is revealed): keep them rare.
    { weight: 1, arbitrary: fc.string({ minLength: 1, maxLength: 10 }).map((pw) => `Basic ${base64(`fuzz-nobody:${pw}`)}`) },
  );
}

const methods = fc.constantFrom('GET', 'POST', 'PUT', 'DELETE', 'PATCH', 'HEAD', 'OPTIONS');
const queryStrings = fc.oneof(
  { weight: 6, arbitrary: fc.constant('') },
  { weight: 1, arbitrary: fc.constantFrom('?', '?a=1&a=2', '?__proto__[x]=1', '?targetOrgId=2', '?orgId=abc', '?%ff=%zz', `?${'q'.repeat(3000)}`) },
);

function bodyFor(route: RestRoute | null, variables: ReturnType<typeof operationVariables> | null): fc.Arbitrary<Buffer | undefined> {
  const structured = variables && variables.size > 0
    ? fc.tuple(...[...variables].map(([name, type]) => fc.option(fc.tuple(keyCase(name), valueFor(type)), { freq: 4, nil: null })))
      .map((entries) => objectText(entries.filter((e): e is [string, string] => e !== null)))
    : fc.constant('{}');
  const inputBody = route?.body === 'input' && variables?.get('input') ? valueFor(variables.get('input')!) : structured;
  return fc.oneof(
    { weight: 8, arbitrary: inputBody.map((t) => Buffer.from(t)) },
    { weight: 2, arbitrary: wrongValue.map((t) => Buffer.from(t)) },
    { weight: 2, arbitrary: fc.constant(undefined) },
    { weight: 1, arbitrary: fc.constantFrom('', 'null', '[]', '"x"', '{', '{"a":', '{"a":1,}', '\ufeff{}', '{/*c*/}', 'name=x&type=y', '{"a":1}{"b":2}', '{"a":"\\ud800"}', '{"a":"\\u0000"}').map((t) => Buffer.from(t)) },
    // Invalid UTF-8 inside and outside strings.
    { weight: 1, arbitrary: fc.uint8Array({ minLength: 1, maxLength: 16 }).map((bytes) => Buffer.concat([Buffer.from('{"name":"'), Buffer.from(bytes), Buffer.from('","type":"loki","access":"proxy"}')])) },
    { weight: 1, arbitrary: fc.uint8Array({ minLength: 1, maxLength: 64 }).map((bytes) => Buffer.from(bytes)) },
  );
}

function operationVariables(route: RestRoute, skip: ReadonlySet<string> = new Set()): Map<string, GraphQLInputType> {
  const variables = new Map<string, GraphQLInputType>();
  for (const [name, v] of compiled.get(route)!.variables) if (!skip.has(name)) variables.set(name, v.type);
  return variables;
}

function headersArb(ctx: FuzzContext, hasBody: boolean): fc.Arbitrary<Record<string, string>> {
  return fc.record(
    {
      authorization: authorization(ctx),
      'content-type': fc.oneof({ weight: 6, arbitrary: fc.constant(hasBody ? 'application/json' : undefined) }, { weight: 3, arbitrary: contentTypes }, { weight: 1, arbitrary: fc.constant(undefined) }),
      accept: fc.option(fc.constantFrom('application/json', 'text/html', '*/*', 'text/event-stream', 'multipart/mixed', 'application/graphql-response+json', 'image/png'), { freq: 2 }),
      // Mostly the caller's own org, so enough requests get past it to reach the routes behind.
      'x-grafana-org-id': fc.option(fc.oneof(
        { weight: 3, arbitrary: fc.constant('1') },
        { weight: 2, arbitrary: fc.constantFrom('2', '0', '-1', 'abc', '2147483648', '99999999999999999999', '1.5', '', '1,2', '+1', '01') },
      ), { freq: 6 }),
      'transfer-encoding': fc.option(fc.constant('chunked'), { freq: 8 }),
    },
    { requiredKeys: [] },
  ).map((headers) => {
    const clean: Record<string, string> = {};
    for (const [name, value] of Object.entries(headers)) if (typeof value === 'string') clean[name] = value;
    return clean;
  });
}

function restCase(ctx: FuzzContext, route: RestRoute): fc.Arbitrary<FuzzCase> {
  const params = [...route.path.matchAll(/:([A-Za-z]+)/g)].map((m) => m[1]!);
  // Reads and updates may hit the real data source; nothing else may (a fuzzed DELETE or password change of a real row would end the run).
  const mayHitReal = route.method !== 'DELETE' && route.path.startsWith('/api/datasources');
  const real = (name: string) => (name === 'uid' ? ctx.dataSource.uid : name === 'name' ? ctx.dataSource.name : String(ctx.dataSource.id));
  const segment = (name: string) => (mayHitReal ? fc.oneof({ weight: 3, arbitrary: oddSegment }, { weight: 2, arbitrary: fc.constant(encodeURIComponent(real(name))) }) : oddSegment);
  const variables = operationVariables(route, new Set(params));
  return fc.record({
    method: fc.oneof({ weight: 9, arbitrary: fc.constant(route.method) }, { weight: 1, arbitrary: mayHitReal ? methods.filter((m) => m !== 'DELETE') : methods }),
    values: fc.tuple(...params.map(segment)),
    extra: fc.oneof({ weight: 12, arbitrary: fc.constant('') }, { weight: 1, arbitrary: fc.constantFrom('/', '//', '/x', '/..') }),
    query: queryStrings,
    body: route.body ? bodyFor(route, variables) : fc.option(bodyFor(null, null), { freq: 6, nil: undefined }),
    headers: headersArb(ctx, Boolean(route.body)),
  }).map(({ method, values, extra, query, body, headers }) => {
    let i = 0;
    const path = route.path.replace(/:([A-Za-z]+)/g, () => values[i++]!) + extra + query;
    return { target: 'rest' as const, label: `${route.method} ${route.path}`, request: { method, path, headers: callerSafe(ctx, headers, changesCaller(route)), body: method === 'GET' || method === 'HEAD' ? undefined : body } };
  });
}

/** The REST operations' own documents, sent to /graphql with generated variables. */
const operations = REST_ROUTES.map((route) => ({ name: compiled.get(route)!.name, source: print(compiled.get(route)!.document), variables: operationVariables(route), changesCaller: changesCaller(route) }));
const adHocQueries = fc.oneof(
  fc.constantFrom(
    '{ currentOrganization { dataSources { nodes { id name } } } }', '{ __typename }', '{ __schema { types { name } } }', 'query { currentOrganization { dataSource(databaseId: "1") { id } } }', 'query { currentOrganization { dataSource(databaseId: 99999) { id } } }',
    'mutation { dataSourceCreate(input: { name: "x\\u0000", type: "loki", access: "proxy" }) { dataSource { id } } }', '{ currentOrganization { dataSources { nodes { id', '}}}', '', 'subscription { x }',
    'query Q { a: currentOrganization { dataSources { nodes { id } } } b: currentOrganization { dataSources { nodes { id } } } }', 'fragment F on DataSource { ...F } { currentOrganization { dataSources { nodes { ...F } } } }', '{ currentOrganization { dataSources { nodes { jsonData(x: 1) } } } }',
    'query($v: JSONObject) { __typename }', '{ adminStats { userCount } }', '{ adminSettings }', 'mutation { alertsPause(paused: false) { paused } }',
  ),
  fc.string({ maxLength: 60 }),
  // Nesting and alias counts a parser survives; limits on them belong to the GraphQL hardening.
  fc.integer({ min: 2, max: 200 }).map((depth) => `{ dataSources ${'{ id '.repeat(depth)}${'}'.repeat(depth)} }`),
  fc.integer({ min: 2, max: 100 }).map((count) => `{ ${Array.from({ length: count }, (_, i) => `a${i}: __typename`).join(' ')} }`),
);

function graphqlCase(ctx: FuzzContext): fc.Arbitrary<FuzzCase> {
  const operation = fc.constantFrom(...operations);
  const withVariables = operation.chain((op) =>
    fc.tuple(fc.constant(op), fc.tuple(...[...op.variables].map(([name, type]) => fc.option(fc.tuple(fc.constant(name), valueFor(type)), { freq: 5, nil: null })))));
  const document = fc.oneof(
    { weight: 4, arbitrary: withVariables.map(([op, vars]) => ({ query: op.source, variables: objectText(vars.filter((v): v is [string, string] => v !== null)), operationName: op.name, changesCaller: op.changesCaller })) },
    { weight: 2, arbitrary: fc.tuple(adHocQueries, fc.option(wrongValue)).map(([query, variables]) => ({ query, variables: variables ?? undefined, operationName: undefined, changesCaller: false })) },
  );
  const post = fc.tuple(document, fc.option(fc.tuple(hostileKey, wrongValue), { freq: 4 }), fc.option(fc.constantFrom('1', '"x"', '{"a":1}', 'null', '["a"]'), { freq: 5 }))
    .map(([doc, extra, opName]) => {
      const entries: Array<[string, string]> = [['query', text(doc.query)]];
      if (doc.variables !== undefined) entries.push(['variables', doc.variables]);
      if (opName) entries.push(['operationName', opName]);
      else if (doc.operationName) entries.push(['operationName', text(doc.operationName)]);
      if (extra) entries.push(extra);
      return { body: Buffer.from(objectText(entries)), changesCaller: doc.changesCaller };
    });
  return fc.oneof(
    { weight: 6, arbitrary: fc.record({ sent: fc.oneof({ weight: 5, arbitrary: post }, { weight: 2, arbitrary: bodyFor(null, null).map((body) => ({ body, changesCaller: false })) }), headers: headersArb(ctx, true), method: fc.oneof({ weight: 9, arbitrary: fc.constant('POST') }, { weight: 1, arbitrary: methods }) })
      .map(({ sent, headers, method }) => ({ target: 'graphql' as const, label: 'POST /graphql', request: { method, path: '/graphql', headers: callerSafe(ctx, headers, sent.changesCaller), body: method === 'GET' || method === 'HEAD' ? undefined : sent.body } })) },
    { weight: 1, arbitrary: fc.record({ doc: document, headers: headersArb(ctx, false) }).map(({ doc, headers }) => {
      const params = new URLSearchParams({ query: doc.query });
      if (doc.variables !== undefined) params.set('variables', doc.variables);
      return { target: 'graphql' as const, label: 'GET /graphql', request: { method: 'GET', path: `/graphql?${params}`, headers: callerSafe(ctx, headers, doc.changesCaller) } };
    }) },
  );
}

function proxyCase(ctx: FuzzContext): fc.Arbitrary<FuzzCase> {
  // Only data sources that do not exist: a real one would make this a test of its upstream.
  const ref = fc.oneof(oddSegment, oddSegment.map((s) => `uid/${s}`), fc.constantFrom('', 'uid', 'uid/', '%2F', '..'));
  return fc.record({ method: methods, ref, rest: fc.array(oddSegment, { maxLength: 3 }), query: queryStrings, headers: headersArb(ctx, false), body: fc.option(bodyFor(null, null), { freq: 3, nil: undefined }) })
    .map(({ method, ref, rest, query, headers, body }) => ({
      target: 'proxy' as const,
      label: `${method} /api/datasources/proxy/*`,
      request: { method, path: `/api/datasources/proxy/${ref}${rest.length ? `/${rest.join('/')}` : ''}${query}`, headers, body: method === 'GET' || method === 'HEAD' ? undefined : body },
    }));
}

function unknownCase(ctx: FuzzContext): fc.Arbitrary<FuzzCase> {
  const path = fc.oneof(
    fc.constantFrom('/', '/api', '/api/', '/api/admin', '/api/datasources/uid', '/api/datasources/name', '/api/serviceaccounts/search/x', '//api//datasources', '/API/DATASOURCES', '/graphql/', '/graphql?', '*'),
    fc.array(oddSegment, { minLength: 1, maxLength: 4 }).map((segments) => `/api/${segments.join('/')}`),
  );
  return fc.record({ method: methods, path, headers: headersArb(ctx, false) })
    .map(({ method, path, headers }) => ({ target: 'unknown' as const, label: 'unknown path', request: { method, path, headers } }));
}

/** Bodies at and past the default 1 MiB limit, to routes that read one and to /graphql. */
function bigBodyCase(ctx: FuzzContext): fc.Arbitrary<FuzzCase> {
  const targets = [...REST_ROUTES.filter((r) => r.body).map((r) => ({ method: r.method, path: r.path.replace(/:[A-Za-z]+/g, '20000'), graphql: false })), { method: 'POST', path: '/graphql', graphql: true }];
  return fc.record({
    target: fc.constantFrom(...targets),
    size: fc.constantFrom(1, 2, 11).map((mib) => mib * 1024 * 1024),
    chunked: fc.boolean(),
    auth: fc.constantFrom(ctx.adminAuth, ctx.tokenAuth),
  }).map(({ target, size, chunked, auth }) => ({
    target: target.graphql ? ('graphql' as const) : ('rest' as const),
    label: `big body ${target.method} ${target.path}`,
    request: { method: target.method, path: target.path, headers: { authorization: auth, 'content-type': 'application/json', ...(chunked ? { 'transfer-encoding': 'chunked' } : {}) } },
    bigBody: size,
  }));
}

export function fuzzCaseArbitrary(ctx: FuzzContext): fc.Arbitrary<FuzzCase> {
  const rest = REST_ROUTES.map((route) => restCase(ctx, route));
  return fc.oneof(
    { weight: 140, arbitrary: fc.oneof(...rest) },
    { weight: 40, arbitrary: graphqlCase(ctx) },
    { weight: 10, arbitrary: proxyCase(ctx) },
    { weight: 10, arbitrary: unknownCase(ctx) },
    { weight: 1, arbitrary: bigBodyCase(ctx) },
  );
}

/** The body to send: a big one is a JSON object with one long string, so only its size is odd. */
export function bodyOf(fuzzCase: FuzzCase): Buffer | string | undefined {
  if (fuzzCase.bigBody === undefined) return fuzzCase.request.body;
  const frame = '{"name":"","type":"loki","access":"proxy","query":"{ __typename }"}';
  return `{"name":"${'n'.repeat(Math.max(0, fuzzCase.bigBody - frame.length))}","type":"loki","access":"proxy","query":"{ __typename }"}`;
}

/** The same cases every run: a failure found once is found again. */
export function generateCases(ctx: FuzzContext, seed: number, count: number): FuzzCase[] {
  return fc.sample(fuzzCaseArbitrary(ctx), { seed, numRuns: count });
}

/** Error answers a client chose by its Accept header: GraphQL errors delivered as stream events or parts. */
const STREAMED = /^(text\/event-stream|multipart\/mixed)/;

/** What must hold for every answer. Returns the problems found (empty when fine). */
export function judge(fuzzCase: FuzzCase, reply: RawReply): string[] {
  const problems: string[] = [];
  if (reply.status >= 500) problems.push(`status ${reply.status}`);
  if (reply.status < 400 || fuzzCase.request.method === 'HEAD') return problems;
  const text = reply.body.toString('utf8');
  if (STACK_TRACE.test(text)) problems.push(`stack trace in body: ${text.slice(0, 200)}`);
  const type = String(reply.headers['content-type'] ?? '');
  const graphql = fuzzCase.request.path.startsWith('/graphql');
  const accept = fuzzCase.request.headers?.accept ?? '';
  if (graphql && STREAMED.test(type) && accept.startsWith(type.split(';')[0]!)) {
    if (!/"errors":\[\{"message":"[^"]/.test(text)) problems.push(`streamed GraphQL error without errors[].message: ${text.slice(0, 160)}`);
    return problems;
  }
  if (!/^application\/(graphql-response\+)?json/.test(type)) problems.push(`error with content-type "${type}"`);
  const body = parseJson(reply.body) as { message?: unknown; errors?: Array<{ message?: unknown }> } | undefined;
  const hasMessage = typeof body?.message === 'string' && body.message !== '';
  const hasErrors = Array.isArray(body?.errors) && body.errors.length > 0 && body.errors.every((e) => typeof e?.message === 'string' && e.message !== '');
  if (body === undefined || body === null || typeof body !== 'object') problems.push(`error body is not JSON: ${text.slice(0, 120)}`);
  // /graphql answers with errors[]; a request refused by the HTTP layer before routing gets a message.
  else if (graphql ? !(hasErrors || hasMessage) : !hasMessage) problems.push(`error without a message: ${text.slice(0, 160)}`);
  return problems;
}

export function describeCase(fuzzCase: FuzzCase): string {
  const { method, path, headers, body } = fuzzCase.request;
  const shownBody = fuzzCase.bigBody !== undefined ? ` body(${fuzzCase.bigBody}B)` : body === undefined ? '' : ` body(${Buffer.byteLength(body)}B)=${Buffer.from(body).toString('utf8').slice(0, 160)}`;
  return `${method} ${path.slice(0, 160)} ${JSON.stringify(headers).slice(0, 200)}${shownBody}`;
}
