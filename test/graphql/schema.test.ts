import { readFileSync } from 'node:fs';
import { describe, expect, it } from '@jest/globals';
import { introspectionFromSchema, parse, printSchema, validate, type IntrospectionField, type IntrospectionInputValue, type IntrospectionObjectType } from 'graphql';
import { orgMember, sameAccess, serverAdmin, type Access } from '../../src/auth/access.ts';
import { declaredAccess, rootTypes } from '../../src/graphql/access.ts';
import { isRestOnly } from '../../src/graphql/public-schema.ts';
import { getPublicSchema, getSchema, printSdl } from '../../src/graphql/schema/index.ts';
import { FRAGMENTS, restSource, ROUTES, type RestRoute } from '../../src/http/routes.ts';
import { checkRestOperations, compileRestFunction, compileRestOperation, prepareRestOperations } from '../../src/rest/executor.ts';

describe('committed GraphQL SDL', () => {
  it('matches the schema the code builds (run `npm run schema:print` after changing it)', () => {
    const committed = readFileSync(new URL('../../schema/schema.graphql', import.meta.url), 'utf8');
    expect(committed).toBe(printSdl());
  });
});

describe('the public schema', () => {
  const REST_ONLY = ['Query.organizations', 'Query.serviceAccountSearch', 'Query.teamSearch', 'Query.userSearch', 'Query.userTeams', 'Query.users'];
  const restOnly = (schema: ReturnType<typeof getSchema>) => rootTypes(schema).flatMap((type) => Object.values(type.getFields()).filter(isRestOnly).map((f) => `${type.name}.${f.name}`));

  it('is the full schema without the root fields only REST rows run, nor the types only they reach', () => {
    expect(restOnly(getSchema()).sort()).toEqual(REST_ONLY);
    expect(restOnly(getPublicSchema())).toEqual([]);
    const query = getPublicSchema().getQueryType()!.getFields();
    expect(query.teamSearch).toBeUndefined();
    expect(query.serviceAccountSearch).toBeUndefined();
    expect(getPublicSchema().getType('TeamSearch')).toBeUndefined();
    expect(getPublicSchema().getType('ServiceAccountSearch')).toBeUndefined();
    for (const name of ['organizations', 'users', 'userSearch', 'userTeams']) expect(query[name]).toBeUndefined();
    expect(getPublicSchema().getType('UserSearchHit')).toBeUndefined();
    expect(getPublicSchema().getType('UserSearchPage')).toBeUndefined();
    // Types the REST-only fields share with the graph stay.
    expect(getPublicSchema().getType('Team')).toBeDefined();
    expect(getPublicSchema().getType('ServiceAccount')).toBeDefined();
    const publicTypes = Object.keys(getPublicSchema().getTypeMap());
    expect(Object.keys(getSchema().getTypeMap()).filter((name) => !publicTypes.includes(name)).sort()).toEqual(['ServiceAccountSearch', 'TeamSearch', 'UserSearchHit', 'UserSearchPage']);
  });

  it('refuses a document naming a REST-only field, which the full schema accepts', () => {
    const document = parse('{ teamSearch { totalCount } serviceAccountSearch { totalCount } }');
    expect(validate(getSchema(), document)).toEqual([]);
    // (A suggestion may follow, naming whichever public field is spelt closest.)
    expect(validate(getPublicSchema(), document).map((e) => e.message)).toEqual([
      expect.stringMatching(/^Cannot query field "teamSearch" on type "Query"\./),
      expect.stringMatching(/^Cannot query field "serviceAccountSearch" on type "Query"\./),
    ]);
  });

  it('is what the committed SDL prints, and keeps the full schema\'s resolvers and access rules', () => {
    const sdl = printSdl();
    expect(sdl).not.toMatch(/teamSearch|serviceAccountSearch|TeamSearch/);
    expect(printSchema(getPublicSchema())).not.toContain('teamSearch');
    const fullViewer = getSchema().getQueryType()!.getFields().viewer!;
    const publicViewer = getPublicSchema().getQueryType()!.getFields().viewer!;
    expect(publicViewer.resolve).toBe(fullViewer.resolve);
    expect(declaredAccess(publicViewer)).toBe(declaredAccess(fullViewer));
  });
});

describe('REST rows and the fields they run', () => {
  const rows = ROUTES.filter((r): r is RestRoute => r.kind === 'rest');

  it('compile, each with a door rule', () => {
    expect(rows.length).toBeGreaterThan(20);
    for (const row of rows) {
      const op = compileRestOperation(getSchema(), restSource(row), FRAGMENTS);
      expect(op.access).toBe(row.access);
    }
  });

  it('take their door rule from the field they run, or their own gate', () => {
    const document = 'query ListDataSources { currentOrganization { dataSources { nodes { id } } } }';
    expect(sameAccess(compileRestOperation(getSchema(), { source: document, at: 'currentOrganization.dataSources.nodes' }, '').access, orgMember('datasources:read'))).toBe(true);
    expect(compileRestOperation(getSchema(), { source: document, gate: serverAdmin }, '').access).toBe(serverAdmin);
  });

  it('are checked together, naming the one that is wrong, and compiled apart', () => {
    const checked = checkRestOperations(getSchema(), rows.map(restSource), FRAGMENTS);
    expect(checked.map((op) => op.compiled)).toEqual(rows.map(() => null));
    // Each carries exactly the fragments it spreads, transitively.
    const listing = checked.find((op) => op.name === 'ListDataSources')!;
    expect(listing.document.definitions.map((d) => ('name' in d ? d.name?.value : undefined))).toEqual(['ListDataSources', 'DataSourceListItem']);
    expect(compileRestFunction(listing)).toBe(compileRestFunction(listing));

    const sources = [
      { source: 'query One { currentOrganization { dataSources { nodes { ...DataSourceListItem } } } }' },
      { source: 'query Two { currentOrganization { dataSources { nodes { nope } } } }' },
    ];
    expect(() => checkRestOperations(getSchema(), sources, FRAGMENTS)).toThrow(/^REST operation Two is invalid: Cannot query field "nope"/);
    expect(() => checkRestOperations(getSchema(), [sources[0]!, { source: sources[0]!.source.replace('One', 'Two') }, { source: sources[0]!.source.replace('One', 'Two') }], FRAGMENTS))
      .toThrow(/invalid together: There can be only one operation named "Two"/);
    expect(() => checkRestOperations(getSchema(), [{ source: 'query Three { currentOrganization { dataSources { nodes { ...Missing } } } }' }], FRAGMENTS)).toThrow(/Three is invalid: Unknown fragment "Missing"/);
    expect(() => checkRestOperations(getSchema(), [{ source: 'query Four { currentOrganization { dataSources { nodes { id } } } }', at: 'currentOrganization.dataSources.nope' }], FRAGMENTS)).toThrow(/Four: no field answers under "nope"/);
  });

  it('are prepared at start-up without validation, and each is validated before it compiles', () => {
    const prepared = prepareRestOperations(getSchema(), rows.map(restSource), FRAGMENTS);
    expect(prepared.map((op) => [op.name, op.validated, op.compiled])).toEqual(checkRestOperations(getSchema(), rows.map(restSource), FRAGMENTS).map((op) => [op.name, false, null]));
    expect(prepared.map((op) => op.access)).toEqual(rows.map((row) => row.access));
    // A row whose answer path cannot be read still fails at once, naming itself.
    expect(() => prepareRestOperations(getSchema(), [{ source: 'query Four { currentOrganization { dataSources { nodes { id } } } }', at: 'currentOrganization.dataSources.nope' }], FRAGMENTS)).toThrow(/Four: no field answers under "nope"/);
    // A wrong document passes preparation and is refused when it is first compiled, never run.
    const [wrong] = prepareRestOperations(getSchema(), [{ source: 'query Five { currentOrganization { dataSources { nodes { id nope } } } }' }], FRAGMENTS);
    expect(() => compileRestFunction(wrong!)).toThrow(/^REST operation Five is invalid: Cannot query field "nope"/);
    expect(wrong!.compiled).toBeNull();
    const [right] = prepareRestOperations(getSchema(), [{ source: 'query Six { currentOrganization { dataSources { nodes { ...DataSourceListItem } } } }' }], FRAGMENTS);
    expect(compileRestFunction(right!)).toBe(right!.compiled);
    expect(right!.validated).toBe(true);
  });

  it('every root field declares its access rule', () => {
    const undeclared = rootTypes(getSchema()).flatMap((type) => Object.values(type.getFields()).filter((f) => !declaredAccess(f)).map((f) => `${type.name}.${f.name}`));
    expect(undeclared).toEqual([]);
  });
});

/**
 * What a root field's description must say of who may call it, derived from the rule it declares
 * (so a field whose rule changes must say so): the role and the action of an org role, server
 * admins, signed-in users or any signed-in caller.
 */
function mustSay(access: Access): RegExp[] {
  const escape = (text: string) => text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
  switch (access.kind) {
    case 'org-role':
      if (access.role === 'None') return [/\bOrg members of any role \(`None` included\)/, new RegExp(`\\(${escape(access.action)}\\)`)];
      return [new RegExp(`\\bOrg ${access.role}s\\b`), new RegExp(`\\(${escape(access.action)}\\)`), ...(access.serverAdmins ? [/server admins/] : [])];
    case 'server-admin':
      return [/Server admins only/, access.action ? new RegExp(`\\(${escape(access.action)}\\)`) : /\(Basic credentials\)/];
    case 'user':
      return [/Signed-in users \(Basic credentials; (no token|tokens are refused)\)/];
    case 'signed-in':
      return [/[Aa]ny signed-in caller/];
    default:
      return [/Anyone/];
  }
}

describe('descriptions, as GraphiQL shows them', () => {
  const schema = getSchema();
  const introspection = introspectionFromSchema(schema);
  const types = introspection.__schema.types.filter((t) => !t.name.startsWith('__'));

  it('say on every root field who may call it, naming the rule it declares', () => {
    const roots = rootTypes(schema);
    const unsaid: string[] = [];
    let checked = 0;
    for (const root of roots) {
      const shown = types.find((t) => t.name === root.name) as IntrospectionObjectType;
      for (const field of shown.fields) {
        const access = declaredAccess(root.getFields()[field.name]!);
        expect(access).toBeDefined();
        const missing = mustSay(access!).filter((rule) => !rule.test(field.description ?? ''));
        if (missing.length) unsaid.push(`${root.name}.${field.name}: ${missing.join(', ')} in "${field.description ?? ''}"`);
        checked++;
      }
    }
    expect(unsaid).toEqual([]);
    // Every root field was read: as many as the schema's three root types hold.
    expect(checked).toBe(roots.reduce((n, root) => n + Object.keys(root.getFields()).length, 0));
    expect(checked).toBeGreaterThan(50);
  });

  it('describe every type, field, input field, argument and enum value', () => {
    const undescribed: string[] = [];
    const check = (what: string, item: { description?: string | null }) => {
      if (!item.description) undescribed.push(what);
    };
    for (const type of types) {
      check(type.name, type);
      const fields: readonly IntrospectionField[] = 'fields' in type && type.fields ? type.fields : [];
      for (const field of fields) {
        check(`${type.name}.${field.name}`, field);
        for (const arg of field.args) check(`${type.name}.${field.name}(${arg.name})`, arg);
      }
      const inputs: readonly IntrospectionInputValue[] = 'inputFields' in type && type.inputFields ? type.inputFields : [];
      for (const input of inputs) check(`${type.name}.${input.name}`, input);
      for (const value of type.kind === 'ENUM' ? type.enumValues : []) check(`${type.name}.${value.name}`, value);
    }
    expect(undescribed).toEqual([]);
  });
});
