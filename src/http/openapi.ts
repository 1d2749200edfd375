import { writeFileSync } from 'node:fs';
import {
  GraphQLBoolean, GraphQLFloat, GraphQLID, GraphQLInt, GraphQLString, getNamedType, getNullableType, isEnumType, isInputObjectType, isListType,
  isNonNullType, isObjectType, isScalarType, Kind, parse, typeFromAST,
  type ArgumentNode, type DocumentNode, type FieldNode, type FragmentDefinitionNode, type GraphQLArgument,
  type GraphQLField, type GraphQLInputType, type GraphQLNamedType, type GraphQLObjectType, type GraphQLOutputType,
  type GraphQLSchema, type OperationDefinitionNode, type SelectionSetNode,
} from 'graphql';
import { describeAccess } from '../auth/access.ts';
import { getSchema } from '../graphql/schema/index.ts';
import { answerSteps, findField } from '../rest/access.ts';
import type { Wire } from '../rest/wire.ts';
import { projectPath } from '../project-root.ts';
import { VERSION } from '../version.ts';
import { FRAGMENTS, ROUTES, type EndpointRoute, type RestRoute, type Route } from './routes.ts';

/**
 * The REST contract as an OpenAPI 3.0 document, derived from what actually serves the routes: the
 * route table gives paths, methods, access and body mapping; each route's GraphQL operation gives
 * the request body (its `$input` type, or its other variables) and the response (its selection
 * set, field by field, in the order the JSON is written).
 */

/** A JSON schema object in the OpenAPI 3.0 dialect. */
type Schema = Record<string, unknown>;

const COMMITTED_FILE = projectPath('schema', 'openapi.json');

const ERROR_RESPONSES = {
  BadRequest: 'The path parameter, the JSON body or a value in it is invalid (e.g. "bad request data", "id is invalid").',
  Unauthorized: 'No credentials, or wrong ones.',
  Forbidden: 'The caller lacks the org role or the server-admin permission the operation needs.',
  NotFound: 'No such resource in the caller\'s org.',
  Error: 'Any other failure (a conflict, a body over the size limit, an internal error), with its message.',
} as const;

const ERROR_STATUS: Record<string, keyof typeof ERROR_RESPONSES> = {
  400: 'BadRequest', 401: 'Unauthorized', 403: 'Forbidden', 404: 'NotFound',
};

/** Rows served by their own handler, documented by hand; the others (GraphQL, metrics, the fallback) are not REST. */
function endpointOperation(route: EndpointRoute): Record<string, unknown> | null {
  const proxy = (by: 'id' | 'uid') => ({
    summary: `Forwards a call to the data source with this ${by}`,
    description: 'Every method is forwarded; the rest of the path (`path`, which may contain slashes) and the query string go to the data source\'s URL. The response is the data source\'s own.',
    operationId: by === 'id' ? 'ProxyDataSourceById' : 'ProxyDataSourceByUid',
    tags: ['datasources'],
    security: [{ basicAuth: [] }, { bearerAuth: [] }],
    parameters: [
      { name: by, in: 'path', required: true, schema: by === 'id' ? { type: 'integer', format: 'int32' } : { type: 'string' } },
      { name: 'path', in: 'path', required: true, schema: { type: 'string' }, description: 'The path below the data source\'s URL.' },
      { $ref: '#/components/parameters/OrgId' },
    ],
    responses: {
      200: { description: 'Whatever the data source answers, with its status and headers.' },
      ...errorResponses([401, 403, 404]),
    },
  });
  switch (route.endpoint) {
    case 'openapi':
      return {
        summary: 'This document',
        operationId: 'GetOpenApiDocument',
        tags: ['meta'],
        security: [],
        responses: { 200: { description: 'The OpenAPI document of the REST API.', content: { 'application/json': { schema: { type: 'object' } } } } },
      };
    case 'proxy':
      return proxy(route.path.includes('/uid/') ? 'uid' : 'id');
    case 'ds-query':
      return {
        summary: 'Queries data sources (the original\'s "Query a data source")',
        description: 'Body `{from, to, queries[]}`: `from`/`to` as epoch-ms strings, durations (`5m`) or date math (`now-1h`); each query with `refId`, `datasource {type, uid}` (or the legacy string, or `datasourceId`), `intervalMs`, `maxDataPoints` and its kind\'s own keys. The answer is `{"results": {"<refId>": {"error"?, "errorSource"?, "status", "frames"?}}}` with data frames in the plugin SDK\'s JSON; 400 with the same body when any refId failed.',
        operationId: 'QueryMetricsWithExpressions',
        tags: ['datasources'],
        security: [{ basicAuth: [] }, { bearerAuth: [] }],
        parameters: [{ $ref: '#/components/parameters/OrgId' }],
        requestBody: { required: true, content: { 'application/json': { schema: { type: 'object', properties: { from: { type: 'string' }, to: { type: 'string' }, queries: { type: 'array', items: { type: 'object' } } }, required: ['queries'] } } } },
        responses: {
          200: { description: 'Every refId answered.', content: { 'application/json': { schema: { type: 'object', properties: { results: { type: 'object' } } } } } },
          ...errorResponses([400, 401, 403, 404]),
        },
      };
    case 'ds-resource': {
      const by = route.path.includes('/uid/') ? 'uid' : 'id';
      return {
        summary: `Calls a resource of the data source with this ${by}`,
        description: 'Every method; the rest of the path (`path`), the query string and the body go to the data source\'s kind (Prometheus: passed through to its HTTP API). 404 for kinds without resources.',
        operationId: by === 'id' ? 'CallDatasourceResourceById' : 'CallDatasourceResourceWithUID',
        tags: ['datasources'],
        security: [{ basicAuth: [] }, { bearerAuth: [] }],
        parameters: [
          { name: by, in: 'path', required: true, schema: by === 'id' ? { type: 'integer', format: 'int32' } : { type: 'string' } },
          { name: 'path', in: 'path', required: true, schema: { type: 'string' }, description: 'The resource path.' },
          { $ref: '#/components/parameters/OrgId' },
        ],
        responses: { 200: { description: 'The resource\'s answer, with its status.' }, ...errorResponses([401, 403, 404]) },
      };
    }
    default:
      return null;
  }
}

/** A row's path in OpenAPI's form: `:name` as `{name}`, the final `*` as `{path}`. */
function openApiPath(route: Route): string {
  return route.path.replace(/:(\w+)/g, '{$1}').replace(/\*$/, '{path}');
}

/** Builds the document; pure, so the committed file and the served one are the same bytes. */
export function buildOpenApiDocument(schema: GraphQLSchema, routes: readonly Route[], fragments: string): Record<string, unknown> {
  const document = parse([...routes.flatMap((r) => (r.kind === 'rest' ? [r.document] : [])), fragments].join('\n'));
  const builder = new DocumentBuilder(schema, document);
  const paths: Record<string, Record<string, unknown>> = {};
  for (const route of routes) {
    const operation = route.kind === 'rest' ? builder.operation(route) : endpointOperation(route);
    if (!operation) continue;
    const path = openApiPath(route);
    paths[path] ??= {};
    // A row for any method is documented as its GET.
    paths[path][route.method === 'ANY' ? 'get' : route.method.toLowerCase()] = { ...operation, 'x-access': describeAccess(route.access) };
  }

  return {
    openapi: '3.0.3',
    info: {
      title: 'dashgate REST API',
      version: VERSION,
      description: 'Wire-compatible with the dashboard server HTTP API it mirrors. Every route runs one GraphQL operation '
        + '(shown as `x-graphql-operation`) and answers with the value of its single root field; errors are `{"message": "..."}`. '
        + 'JSON body keys are matched case-insensitively. The same operations are available over GraphQL at `/graphql`.',
    },
    servers: [{ url: '/' }],
    tags: [
      { name: 'datasources', description: 'Data sources and their proxy.' },
      { name: 'admin', description: 'Server administration: Basic authentication of a server admin only.' },
      { name: 'auth', description: 'Legacy API keys.' },
      { name: 'serviceaccounts', description: 'Service accounts and their tokens.' },
      { name: 'users', description: 'Users: server administration.' },
      { name: 'user', description: 'The signed-in user (Basic credentials; tokens are refused).' },
      { name: 'orgs', description: 'Organizations: server admins, and each org\'s members and Admins.' },
      { name: 'org', description: 'The org the request acts in (`X-Grafana-Org-Id`, or the user\'s current org).' },
      { name: 'frontend', description: 'What front ends and client libraries start from.' },
      { name: 'meta', description: 'About the API itself.' },
    ].filter((tag) => Object.values(paths).some((methods) => Object.values(methods).some((op) => (op as { tags: string[] }).tags.includes(tag.name)))),
    paths,
    components: {
      schemas: builder.components(),
      responses: Object.fromEntries(Object.entries(ERROR_RESPONSES).map(([name, description]) => [
        name, { description, content: { 'application/json': { schema: { $ref: '#/components/schemas/Error' } } } },
      ])),
      parameters: {
        OrgId: {
          name: 'X-Grafana-Org-Id', in: 'header', required: false, schema: { type: 'integer', format: 'int64' },
          description: 'With Basic authentication: the org to act in (the user\'s current org otherwise). Tokens always act in their own org.',
        },
      },
      securitySchemes: {
        basicAuth: { type: 'http', scheme: 'basic', description: 'A user\'s login (or e-mail) and password.' },
        bearerAuth: { type: 'http', scheme: 'bearer', description: 'An API key or a service account token.' },
      },
    },
  };
}

function errorResponses(statuses: number[]): Record<string, unknown> {
  const responses: Record<string, unknown> = {};
  for (const status of statuses) responses[status] = { $ref: `#/components/responses/${ERROR_STATUS[status]}` };
  responses.default = { $ref: '#/components/responses/Error' };
  return responses;
}

class DocumentBuilder {
  readonly #schema: GraphQLSchema;
  readonly #operations = new Map<string, OperationDefinitionNode>();
  readonly #fragments = new Map<string, FragmentDefinitionNode>();
  readonly #components = new Map<string, Schema>();
  readonly #operationIds = new Set<string>();

  constructor(schema: GraphQLSchema, document: DocumentNode) {
    this.#schema = schema;
    for (const definition of document.definitions) {
      if (definition.kind === Kind.OPERATION_DEFINITION && definition.name) this.#operations.set(definition.name.value, definition);
      if (definition.kind === Kind.FRAGMENT_DEFINITION) this.#fragments.set(definition.name.value, definition);
    }
    this.#components.set('Error', {
      type: 'object',
      description: 'Every error answer carries a message, worded as the original server words it; some carry more fields, as it sends them (the 401 answer, for one).',
      required: ['message'],
      properties: { message: { type: 'string' } },
      additionalProperties: true,
    });
  }

  components(): Record<string, Schema> {
    return Object.fromEntries([...this.#components].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)));
  }

  operation(route: RestRoute): Record<string, unknown> {
    const name = operationName(route.document);
    const definition = this.#operations.get(name);
    if (!definition) throw new Error(`No operation ${name} for ${route.method} ${route.path}`);
    const rootType = definition.operation === 'mutation' ? this.#schema.getMutationType() : this.#schema.getQueryType();
    const rootNode = definition.selectionSet.selections.find((s): s is FieldNode => s.kind === Kind.FIELD);
    const rootField = rootNode && rootType?.getFields()[rootNode.name.value];
    if (!rootNode || !rootField) throw new Error(`REST operation ${name} must select one root field`);

    const variables = new Map((definition.variableDefinitions ?? []).map((v) => [v.variable.name.value, v]));
    const pathParams = [...route.path.matchAll(/:(\w+)/g)].map((m) => m[1]!);
    const parameters: unknown[] = pathParams.map((name) => {
      const variable = variables.get(name);
      const type = variable ? (typeFromAST(this.#schema, variable.type as never) as GraphQLInputType) : GraphQLString;
      const description = paramDescription(route, name) ?? argumentFor(rootField, rootNode, name)?.description ?? undefined;
      // A numeric id REST takes, made the global id the graph takes.
      const schema = route.ids?.[name] || (route.membership && !variable) ? { type: 'integer', format: 'int32' } : this.#inputSchema(type, false);
      return { name, in: 'path', required: true, schema, ...(description ? { description } : {}) };
    });
    for (const [param, variableName] of Object.entries(route.query ?? {})) {
      const variable = variables.get(variableName);
      if (!variable) throw new Error(`REST operation ${name} has no variable $${variableName} for the query parameter ${param}`);
      const type = typeFromAST(this.#schema, variable.type as never) as GraphQLInputType;
      const description = paramDescription(route, variableName) ?? argumentFor(rootField, rootNode, variableName)?.description ?? undefined;
      parameters.push({ name: param, in: 'query', required: false, schema: this.#inputSchema(type, false), ...(description ? { description } : {}) });
    }
    if (route.access.kind !== 'server-admin') parameters.push({ $ref: '#/components/parameters/OrgId' });

    const about = route.doc ?? rootField.description;
    const operation: Record<string, unknown> = {
      summary: firstSentence(about) ?? words(name),
      description: `${about ? `${about}\n\n` : ''}Runs the GraphQL operation \`${name}\`.`,
      operationId: this.#operationId(name),
      tags: [route.path.split('/')[2] ?? 'api'],
      // Not deprecated with its root field: GraphQL retires root fields the graph replaced, but the
      // REST path running one keeps the original server's contract.
      security: route.access.kind === 'server-admin' ? [{ basicAuth: [] }] : [{ basicAuth: [] }, { bearerAuth: [] }],
      ...(parameters.length ? { parameters } : {}),
    };
    if (route.body) operation.requestBody = this.#requestBody(route, definition, rootField, rootNode, pathParams);

    const status = route.status ?? 200;
    const selected = this.#answerSchema(route, definition, rootNode);
    const pathHasInt = parameters.some((p) => (p as { schema?: Schema }).schema?.type === 'integer');
    operation.responses = {
      [status]: { description: status === 201 ? 'Created' : 'OK', content: { 'application/json': { schema: selected } } },
      ...errorResponses([
        ...(route.body || pathHasInt ? [400] : []),
        401,
        403,
        ...(pathParams.length ? [404] : []),
      ]),
    };
    if (route.result?.otherStatus) {
      // A route whose status follows its result answers the same shape with the other status too.
      (operation.responses as Record<string, unknown>)[route.result.otherStatus] = {
        description: 'The same body, for a result that is not a success', content: { 'application/json': { schema: selected } },
      };
    }
    operation['x-graphql-operation'] = name;
    return operation;
  }

  /**
   * The REST answer's schema: the value at the row's `at` (never null there: the row answers its
   * `missing` instead), as the row's wire shape writes it, or as the graph answers it.
   */
  #answerSchema(route: RestRoute, definition: OperationDefinitionNode, rootNode: FieldNode): Schema {
    const at = route.at ? route.at.split('.') : [rootNode.alias?.value ?? rootNode.name.value];
    const steps = answerSteps(this.#schema, definition, this.#fragments, at);
    const last = steps[steps.length - 1]!;
    if (route.shape) return this.#wireSchema(route.shape, last.field.type, last.node.selectionSet);
    if (!route.at) return this.#outputSchema(last.field.type, last.node.selectionSet);
    return this.#outputSchema(getNullableType(last.field.type) as GraphQLOutputType, last.node.selectionSet, false);
  }

  /** What a wire shape writes, from a value of `type` with `selectionSet`: the graph's fields it reads, its own constants and derived values. */
  #wireSchema(wire: Wire, type: GraphQLOutputType, selectionSet: SelectionSetNode | undefined): Schema {
    switch (wire.kind) {
      case 'object': {
        const properties: Record<string, Schema> = {};
        for (const [key, field] of wire.fields) properties[key] = this.#wireSchema(field, type, selectionSet);
        const schema = withDescription({ type: 'object', required: Object.keys(properties), properties }, wire.description);
        if (!wire.component) return schema;
        if (!this.#components.has(wire.component)) this.#components.set(wire.component, schema);
        return { $ref: `#/components/schemas/${wire.component}` };
      }
      case 'list': {
        const inner = getNullableType(type);
        return { type: 'array', items: this.#wireSchema(wire.of, isListType(inner) ? inner.ofType : inner, selectionSet) };
      }
      case 'from': {
        let at = type;
        let set = selectionSet;
        let field: GraphQLField<unknown, unknown> | undefined;
        for (const key of wire.path) {
          const found = set ? findField(this.#schema, set, getNamedType(at), key, this.#fragments) : null;
          if (!found) throw new Error(`A wire shape reads "${wire.path.join('.')}", which its document does not select`);
          ({ field } = found);
          at = found.field.type;
          set = found.node.selectionSet;
        }
        if (wire.wire) return withDescription(this.#wireSchema(wire.wire, at, set), wire.description);
        return withDescription(this.#outputSchema(at, set), wire.description ?? field?.description, wire.description ? undefined : field?.deprecationReason);
      }
      case 'constant':
      case 'computed':
      case 'variable':
        return wire.schema;
    }
  }

  #operationId(name: string): string {
    let id = name;
    for (let n = 2; this.#operationIds.has(id); n++) id = `${name}${n}`;
    this.#operationIds.add(id);
    return id;
  }

  #requestBody(route: RestRoute, definition: OperationDefinitionNode, rootField: GraphQLField<unknown, unknown>, rootNode: FieldNode, pathParams: string[]): Record<string, unknown> {
    let schema: Schema;
    if (route.body === 'input') {
      const input = definition.variableDefinitions?.find((v) => v.variable.name.value === 'input');
      const type = input && getNamedType(typeFromAST(this.#schema, input.type as never) as GraphQLInputType);
      // The legacy keys REST takes beside the graph's input are documented as keys of the same body.
      const own = route.params?.input;
      // A row whose legacy keys rewrite the input documents the body REST takes, under its own name.
      if (own && typeof own === 'object') schema = this.#restSchema(own);
      else schema = type ? { $ref: `#/components/schemas/${this.#inputComponent(type.name, route.legacyInput?.fields)}` } : { type: 'object' };
    } else {
      // The body's keys spread over the operation's remaining variables.
      const properties: Record<string, Schema> = {};
      const required: string[] = [];
      for (const variable of definition.variableDefinitions ?? []) {
        const name = variable.variable.name.value;
        if (pathParams.includes(name) || route.currentOrg?.includes(name) || route.membership === name) continue;
        const type = typeFromAST(this.#schema, variable.type as never) as GraphQLInputType;
        const own = route.params?.[name];
        if (own && typeof own === 'object') {
          properties[name] = this.#restSchema(own);
        } else {
          const argument = argumentFor(rootField, rootNode, name);
          properties[name] = withDescription(this.#inputSchema(type, false), own ?? argument?.description, argument?.deprecationReason);
        }
        if (isNonNullType(type) && !variable.defaultValue) required.push(name);
      }
      // Legacy keys REST reads beside the variables are keys of the same body.
      for (const [name, own] of Object.entries(route.legacyInput?.fields ?? {})) properties[name] = this.#restSchema(own);
      schema = { type: 'object', ...(required.length ? { required } : {}), properties };
    }
    return { required: true, description: 'Keys are matched case-insensitively; unknown keys are ignored.', content: { 'application/json': { schema } } };
  }

  /** `nullable` describes the position: non-null GraphQL types clear it. */
  #inputSchema(type: GraphQLInputType, nullable = true): Schema {
    if (isNonNullType(type)) return this.#inputSchema(type.ofType, false);
    let schema: Schema;
    if (isListType(type)) schema = { type: 'array', items: this.#inputSchema(type.ofType) };
    else if (isInputObjectType(type)) return nullableRef(this.#inputComponent(type.name), nullable);
    else schema = leafSchema(type as GraphQLNamedType);
    return nullable ? { ...schema, nullable: true } : schema;
  }

  /** A REST schema of the row's own; `x-component` in it names a component it defines (`[name, schema]`), registered once. */
  #restSchema(schema: Schema): Schema {
    const out: Schema = {};
    for (const [key, value] of Object.entries(schema)) {
      if (key === 'x-component') {
        const [name, component] = value as [string, Schema];
        if (!this.#components.has(name)) this.#components.set(name, component);
        return { $ref: `#/components/schemas/${name}` };
      }
      out[key] = value !== null && typeof value === 'object' && !Array.isArray(value) ? this.#restSchema(value as Schema) : value;
    }
    return out;
  }

  #inputComponent(name: string, legacy?: Readonly<Record<string, Schema>>): string {
    if (!this.#components.has(name)) {
      const type = this.#schema.getType(name);
      if (!isInputObjectType(type)) throw new Error(`${name} is not an input type`);
      this.#components.set(name, {}); // placeholder: input types may refer to themselves
      const properties: Record<string, Schema> = {};
      const required: string[] = [];
      for (const field of Object.values(type.getFields())) {
        properties[field.name] = withDescription(this.#inputSchema(field.type), field.description, field.deprecationReason);
        if (isNonNullType(field.type) && field.defaultValue === undefined) required.push(field.name);
      }
      // Legacy keys among the input's own, in the order of names the input's are in.
      const all = legacy ? Object.fromEntries(Object.entries({ ...properties, ...legacy }).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))) : properties;
      this.#components.set(name, withDescription({ type: 'object', ...(required.length ? { required } : {}), properties: all }, type.description));
    }
    return name;
  }

  #outputSchema(type: GraphQLOutputType, selectionSet: SelectionSetNode | undefined, nullable = true): Schema {
    if (isNonNullType(type)) return this.#outputSchema(type.ofType, selectionSet, false);
    let schema: Schema;
    if (isListType(type)) schema = { type: 'array', items: this.#outputSchema(type.ofType, selectionSet) };
    else if (isObjectType(type) && selectionSet) {
      // A selection that is one named fragment becomes a shared component named after it.
      const only = selectionSet.selections.length === 1 ? selectionSet.selections[0] : undefined;
      if (only?.kind === Kind.FRAGMENT_SPREAD) return nullableRef(this.#fragmentComponent(only.name.value), nullable);
      schema = this.#objectSchema(type, selectionSet);
    } else schema = leafSchema(type as GraphQLNamedType);
    return nullable ? { ...schema, nullable: true } : schema;
  }

  #fragmentComponent(name: string): string {
    if (!this.#components.has(name)) {
      const fragment = this.#fragments.get(name);
      const type = fragment && this.#schema.getType(fragment.typeCondition.name.value);
      if (!fragment || !isObjectType(type)) throw new Error(`Fragment ${name} is missing or not on an object type`);
      this.#components.set(name, {});
      this.#components.set(name, withDescription(this.#objectSchema(type, fragment.selectionSet), type.description));
    }
    return name;
  }

  /** Every selected field is always present in the answer (null where nullable), in selection order. */
  #objectSchema(type: GraphQLObjectType, selectionSet: SelectionSetNode): Schema {
    const properties: Record<string, Schema> = {};
    const collect = (set: SelectionSetNode) => {
      for (const selection of set.selections) {
        if (selection.kind === Kind.FIELD) {
          const key = selection.alias?.value ?? selection.name.value;
          if (selection.name.value === '__typename') {
            properties[key] = { type: 'string', enum: [type.name] };
            continue;
          }
          const field = type.getFields()[selection.name.value];
          if (!field) throw new Error(`${type.name} has no field ${selection.name.value}`);
          properties[key] = withDescription(this.#outputSchema(field.type, selection.selectionSet), field.description, field.deprecationReason);
        } else if (selection.kind === Kind.FRAGMENT_SPREAD) {
          const fragment = this.#fragments.get(selection.name.value);
          if (fragment) collect(fragment.selectionSet);
        } else collect(selection.selectionSet);
      }
    };
    collect(selectionSet);
    return { type: 'object', required: Object.keys(properties), properties };
  }
}

/** GraphQL scalars and enums as JSON schema. */
function leafSchema(type: GraphQLNamedType): Schema {
  if (type === GraphQLInt) return { type: 'integer', format: 'int32' };
  if (type === GraphQLFloat) return { type: 'number', format: 'double' };
  if (type === GraphQLString || type === GraphQLID) return { type: 'string' };
  if (type === GraphQLBoolean) return { type: 'boolean' };
  if (isEnumType(type)) return withDescription({ type: 'string', enum: type.getValues().map((v) => v.value as string) }, type.description);
  if (isScalarType(type) && type.name === 'JSONObject') return withDescription({ type: 'object', additionalProperties: true }, type.description);
  // JSON and any other custom scalar: any JSON value.
  return withDescription({}, isScalarType(type) ? type.description : undefined);
}

function nullableRef(component: string, nullable: boolean): Schema {
  const ref = { $ref: `#/components/schemas/${component}` };
  // OpenAPI 3.0 ignores siblings of $ref, so a nullable reference goes through allOf.
  return nullable ? { nullable: true, allOf: [ref] } : ref;
}

function withDescription(schema: Schema, description?: string | null, deprecationReason?: string | null): Schema {
  if ('$ref' in schema) return description || deprecationReason ? { allOf: [schema], ...described(description, deprecationReason) } : schema;
  return { ...schema, ...described(description, deprecationReason) };
}

function described(description?: string | null, deprecationReason?: string | null): Schema {
  return {
    ...(description || deprecationReason ? { description: [description, deprecationReason && `Deprecated: ${deprecationReason}`].filter(Boolean).join(' ') } : {}),
    ...(deprecationReason ? { deprecated: true } : {}),
  };
}

/** A parameter's description as the row gives it. */
function paramDescription(route: RestRoute, name: string): string | undefined {
  const own = route.params?.[name];
  return typeof own === 'string' ? own : undefined;
}

/** The root field's argument that a variable is passed to directly, for its description. */
function argumentFor(field: GraphQLField<unknown, unknown>, node: FieldNode, variable: string): GraphQLArgument | undefined {
  const argument = node.arguments?.find((a: ArgumentNode) => a.value.kind === Kind.VARIABLE && a.value.name.value === variable);
  return argument && field.args.find((a) => a.name === argument.name.value);
}

/** The name of a row's one operation. */
function operationName(document: string): string {
  const operation = parse(document).definitions.find((d): d is OperationDefinitionNode => d.kind === Kind.OPERATION_DEFINITION);
  if (!operation?.name) throw new Error(`REST document without a named operation: ${document}`);
  return operation.name.value;
}

/** `AddDataSource` -> `Add data source`, for operations whose root field has no description. */
function words(name: string): string {
  const parts = name.split(/(?<=[a-z0-9])(?=[A-Z])/);
  return [parts[0], ...parts.slice(1).map((p) => (/^[A-Z]+$/.test(p) ? p : p.toLowerCase()))].join(' ');
}

function firstSentence(text: string | null | undefined): string | undefined {
  if (!text) return undefined;
  const match = /^(.+?[.!?])(\s|$)/s.exec(text);
  return (match?.[1] ?? text).replace(/\.$/, '');
}

let served: string | null = null;

/** The document of this server's own routes, as served at `/api/openapi.json` and committed. */
export function openApiJson(): string {
  served ??= `${JSON.stringify(buildOpenApiDocument(getSchema(), ROUTES, FRAGMENTS), null, 2)}\n`;
  return served;
}

// `npm run openapi:print` rewrites the committed document; a test fails when it drifts.
if (import.meta.main) writeFileSync(COMMITTED_FILE, openApiJson());
