import { describe, expect, it } from '@jest/globals';
import { getNamedType, getNullableType, isInterfaceType, isListType, isNonNullType, isObjectType, type GraphQLField, type GraphQLObjectType } from 'graphql';
import { asciiFromBase64url, decodeNodeId, encodeNodeId, NODE_TYPES } from '../../src/graphql/node-ids.ts';
import { decodeCursor, encodeCursor, MAX_PAGE_SIZE, pageOf } from '../../src/graphql/paging.ts';
import { MAX_REQUESTED_NODES, requestedNodes } from '../../src/graphql/requested-nodes.ts';
import { getSchema } from '../../src/graphql/schema/index.ts';
import { parse } from 'graphql';

/**
 * The two specifications every GraphQL client library implements, checked on the schema itself:
 * GraphQL Global Object Identification (the Node interface, node and nodes) and GraphQL Cursor
 * Connections (every *Connection type and every field returning one). Plus the pure parts:
 * cursors and global ids.
 */
const schema = getSchema();
const print = (type: { toString(): string }) => type.toString();
const objects = Object.values(schema.getTypeMap()).filter((t): t is GraphQLObjectType => isObjectType(t) && !t.name.startsWith('__'));

describe('GraphQL Global Object Identification', () => {
  it('has a Node interface with exactly id: ID!', () => {
    const node = schema.getType('Node');
    expect(isInterfaceType(node)).toBe(true);
    if (!isInterfaceType(node)) return;
    expect(Object.values(node.getFields()).map((f) => [f.name, print(f.type)])).toEqual([['id', 'ID!']]);
  });

  it('has node(id: ID!): Node and nodes(ids: [ID!]!): [Node]!', () => {
    const query = schema.getQueryType()!.getFields();
    expect([print(query.node!.type), query.node!.args.map((a) => [a.name, print(a.type)])]).toEqual(['Node', [['id', 'ID!']]]);
    expect([print(query.nodes!.type), query.nodes!.args.map((a) => [a.name, print(a.type)])]).toEqual(['[Node]!', [['ids', '[ID!]!']]]);
  });

  it('makes every kind the issue names a node, with its id as a global ID and a description on every field', () => {
    const nodes = schema.getImplementations(schema.getType('Node') as never).objects.map((t) => t.name).sort();
    expect(nodes).toEqual([...NODE_TYPES].sort());
    for (const name of nodes) {
      const type = schema.getType(name) as GraphQLObjectType;
      expect(type.description).toBeTruthy();
      expect(print(type.getFields().id!.type)).toBe('ID!');
      const undescribed = Object.values(type.getFields()).filter((f) => !f.description && !f.deprecationReason).map((f) => `${name}.${f.name}`);
      expect(undescribed).toEqual([]);
    }
  });
});

describe('GraphQL Cursor Connections', () => {
  const connections = objects.filter((t) => t.name.endsWith('Connection'));

  it('finds the connections of every list that can grow', () => {
    expect(connections.map((t) => t.name).sort()).toEqual([
      'ActorOrganizationConnection', 'DataSourceConnection', 'OrganizationConnection', 'OrganizationMemberConnection',
      'ServiceAccountConnection', 'ServiceAccountTokenConnection', 'TeamConnection', 'UserConnection',
    ]);
  });

  it('gives each connection edges of non-null nodes with cursors, a PageInfo and a totalCount', () => {
    for (const connection of connections) {
      const fields = connection.getFields();
      expect([connection.name, print(fields.pageInfo!.type), print(fields.totalCount!.type)]).toEqual([connection.name, 'PageInfo!', 'Int!']);
      const edges = fields.edges!.type;
      expect(isNonNullType(edges) && isListType(getNullableType(edges))).toBe(true);
      const edge = getNamedType(edges) as GraphQLObjectType;
      expect(edge.name.endsWith('Edge')).toBe(true);
      expect(print(edge.getFields().cursor!.type)).toBe('String!');
      expect(isNonNullType(edge.getFields().node!.type)).toBe(true);
      expect(isInterfaceType(schema.getType('Node')) && schema.isSubType(schema.getType('Node') as never, getNamedType(edge.getFields().node!.type) as never)).toBe(true);
      expect(connection.description).toBeTruthy();
    }
    const pageInfo = (schema.getType('PageInfo') as GraphQLObjectType).getFields();
    expect(Object.fromEntries(['hasNextPage', 'hasPreviousPage', 'startCursor', 'endCursor'].map((f) => [f, print(pageInfo[f]!.type)])))
      .toEqual({ hasNextPage: 'Boolean!', hasPreviousPage: 'Boolean!', startCursor: 'String', endCursor: 'String' });
  });

  it('pages every field returning a connection with first/after and last/before, each described', () => {
    const fields: Array<[string, GraphQLField<unknown, unknown>]> = objects.flatMap((t) => Object.values(t.getFields()).map((f) => [t.name, f] as [string, GraphQLField<unknown, unknown>]));
    const paged = fields.filter(([, f]) => getNamedType(f.type).name.endsWith('Connection'));
    expect(paged.map(([owner, f]) => `${owner}.${f.name}`).sort()).toEqual(['Organization.dataSources', 'Organization.members', 'Organization.serviceAccounts', 'Organization.teams', 'Query.allOrganizations', 'Query.allUsers', 'ServiceAccount.organizations', 'ServiceAccount.tokens', 'User.organizations', 'User.teams']);
    for (const [owner, field] of paged) {
      const args = Object.fromEntries(field.args.map((a) => [a.name, print(a.type)]));
      expect({ field: `${owner}.${field.name}`, ...args }).toMatchObject({ field: `${owner}.${field.name}`, first: 'Int', after: 'String', last: 'Int', before: 'String' });
      expect(field.description).toBeTruthy();
    }
  });
});

describe('cursors (pure)', () => {
  const items = ['a', 'b', 'c', 'd', 'e'];
  const names = (page: ReturnType<typeof pageOf<string>>) => page.edges.map((e) => e.node);
  const at = (offset: number) => encodeCursor('L', offset);

  it.each([
    [{ first: 2 }, ['a', 'b'], true, false],
    [{ first: 2, after: at(1) }, ['c', 'd'], true, true],
    [{ first: 10, after: at(3) }, ['e'], false, true],
    [{ last: 2 }, ['d', 'e'], false, true],
    [{ last: 2, before: at(3) }, ['b', 'c'], true, true],
    [{ first: 1, after: at(0), before: at(4) }, ['b'], true, true],
    [{ after: at(99) }, [], false, true],
    [{ first: 0 }, [], true, false],
    [{}, ['a', 'b', 'c', 'd', 'e'], false, false],
  ])('%j selects %j', (args, expected, hasNextPage, hasPreviousPage) => {
    const page = pageOf('L', items, args);
    expect([names(page), page.pageInfo.hasNextPage, page.pageInfo.hasPreviousPage, page.totalCount]).toEqual([expected, hasNextPage, hasPreviousPage, 5]);
    expect(page.pageInfo.startCursor).toBe(page.edges[0]?.cursor ?? null);
    expect(page.pageInfo.endCursor).toBe(page.edges.at(-1)?.cursor ?? null);
  });

  it.each([
    ['another list', encodeCursor('M', 1)],
    ['not base64url', 'a+b/c='],
    ['a negative offset', Buffer.from('L:-1').toString('base64url')],
    ['no offset', Buffer.from('L:').toString('base64url')],
    ['empty', ''],
  ])('refuses a cursor of %s', (_what, cursor) => {
    expect(() => decodeCursor('L', cursor)).toThrow(`Invalid cursor for this list: ${cursor}`);
  });

  it('refuses page sizes outside 0 to the maximum', () => {
    expect(() => pageOf('L', items, { first: MAX_PAGE_SIZE + 1 })).toThrow(`first must be between 0 and ${MAX_PAGE_SIZE}`);
    expect(() => pageOf('L', items, { last: -1 })).toThrow(`last must be between 0 and ${MAX_PAGE_SIZE}`);
  });
});

describe('global ids (pure)', () => {
  it('round-trips every node type', () => {
    for (const typename of NODE_TYPES) expect(decodeNodeId(encodeNodeId(typename, 42))).toEqual({ typename, id: '42' });
    expect(decodeNodeId(encodeNodeId('OrganizationMember', '1:2'))).toEqual({ typename: 'OrganizationMember', id: '1:2' });
  });

  it('reads ids encoded under a node type\'s former name as its type now', () => {
    expect(decodeNodeId(encodeNodeId('DataSourceNode', 7))).toEqual({ typename: 'DataSource', id: '7' });
    expect(decodeNodeId(encodeNodeId('TeamNode', 7))).toEqual({ typename: 'Team', id: '7' });
    expect(decodeNodeId(encodeNodeId('OrganizationNode', 7))).toEqual({ typename: 'Organization', id: '7' });
    expect(decodeNodeId(encodeNodeId('ServiceAccountNode', 7))).toEqual({ typename: 'ServiceAccount', id: '7' });
    expect(decodeNodeId(encodeNodeId('ServiceAccountTokenNode', 7))).toEqual({ typename: 'ServiceAccountToken', id: '7' });
  });

  it('encodes as Buffer does, whatever the prefix leaves over a group of three bytes', () => {
    for (const typename of [...NODE_TYPES, 'A', 'Ab', 'Abc']) {
      for (const key of [0, 7, 42, 999, 2_147_483_647, '12:345', 'é', '']) {
        expect(encodeNodeId(typename, key)).toBe(Buffer.from(`${typename}:${key}`, 'utf8').toString('base64url'));
      }
    }
  });

  it('decodes base64url as Buffer does, for every text of ASCII, and refuses any other', () => {
    const alphabet = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_';
    let seed = 7;
    const random = (n: number) => (seed = (seed * 1_103_515_245 + 12_345) % 2 ** 31) % n;
    for (let i = 0; i < 5000; i++) {
      const encoded = Array.from({ length: 1 + random(40) }, () => alphabet[random(64)]).join('');
      const bytes = Buffer.from(encoded, 'base64url');
      expect(asciiFromBase64url(encoded)).toBe(bytes.every((b) => b < 0x80) ? bytes.toString('latin1') : '');
    }
    for (const text of ['DataSourceNode:1', 'OrganizationMember:12:345', 'A', 'Ab', 'Abc']) expect(asciiFromBase64url(Buffer.from(text).toString('base64url'))).toBe(text);
    for (const other of ['', 'a+b/', 'ab=', 'é', 'A'.repeat(201)]) expect(asciiFromBase64url(other)).toBe('');
    expect(asciiFromBase64url('A'.repeat(200))).toBe(Buffer.from('A'.repeat(200), 'base64url').toString('latin1'));
  });

  it.each([
    ['an unknown type', encodeNodeId('Secret', 1)],
    ['a key that is no id', encodeNodeId('DataSourceNode', 'x')],
    ['not base64url', '!!'],
    ['too long', 'A'.repeat(201)],
    ['a byte that is not ASCII', Buffer.from('DataSourceNode:1\u00e9').toString('base64url')],
  ])('refuses %s', (_what, id) => {
    expect(() => decodeNodeId(id)).toThrow('Invalid global id');
  });
});

describe('objects a request asks connections for (pure)', () => {
  const count = (query: string, variables: Record<string, unknown> = {}, operationName?: string) => requestedNodes(schema, parse(query), operationName, variables);

  it.each([
    ['no connection', '{ viewer { login } }', {}, 0],
    ['a literal page', '{ viewer { currentOrganization { dataSources(first: 1000) { nodes { name } } } } }', {}, 1000],
    ['a page as a variable, by its value', 'query($n: Int) { viewer { currentOrganization { dataSources(first: $n) { nodes { name } } } } }', { n: 250 }, 250],
    ['no size: the default page', '{ viewer { currentOrganization { members { totalCount } } } }', {}, 100],
    ['last when there is no first', 'query($n: Int) { viewer { currentOrganization { members(last: $n) { totalCount } } } }', { n: 7 }, 7],
    ['nested pages multiply', 'query($o: Int, $d: Int, $m: Int) { viewer { organizations(first: $o) { nodes { dataSources(first: $d) { totalCount } members(first: $m) { totalCount } } } } }', { o: 10, d: 100, m: 50 }, 10 + 10 * 100 + 10 * 50],
    ['through fragments', 'query { allOrganizations(first: 3) { ...Orgs } } fragment Orgs on OrganizationConnection { nodes { ... on Organization { members(first: 4) { totalCount } } } }', {}, 3 + 12],
    ['sizes past the maximum count as the maximum', 'query($n: Int) { allUsers(first: $n) { totalCount } }', { n: 1e9 }, MAX_PAGE_SIZE],
  ])('%s', (_what, query, variables, expected) => {
    expect(count(query, variables)).toBe(expected);
  });

  it('puts a thousand orgs of a thousand members over the limit, whichever way the sizes are sent', () => {
    const nested = 'query($a: Int, $b: Int) { allOrganizations(first: $a) { nodes { members(first: $b) { totalCount } } } }';
    expect(count(nested, { a: 1000, b: 1000 })).toBeGreaterThan(MAX_REQUESTED_NODES);
    expect(count(nested, { a: 10, b: 1000 })).toBeLessThanOrEqual(MAX_REQUESTED_NODES);
    expect(count('{ allOrganizations(first: 1000) { nodes { members(first: 1000) { totalCount } } } }')).toBeGreaterThan(MAX_REQUESTED_NODES);
  });

  it('counts the operation named', () => {
    const two = 'query A { allUsers(first: 5) { totalCount } } query B { allUsers(first: 9) { totalCount } }';
    expect([count(two, {}, 'A'), count(two, {}, 'B')]).toEqual([5, 9]);
  });
});
