import { GraphQLBoolean, GraphQLInt, getNullableType } from 'graphql';
import { DomainError, badRequest } from '../errors/domain.ts';
import { MESSAGES } from '../errors/messages.ts';
import { encodeNodeId, type NodeTypeName } from '../graphql/node-ids.ts';
import { inputFromBody, type RestOperation } from './executor.ts';
import type { JsonSchema } from './wire.ts';

/** How a REST route's JSON body maps to its operation's variables. */
export type BodyMapping = 'input' | 'variables' | undefined;

/** What a row says of its variables beyond their GraphQL types. */
export interface VariableMapping {
  body?: BodyMapping;
  /**
   * Variables holding a numeric id REST takes (in the path or the body) that the graph takes as
   * the global id of this node type.
   */
  ids?: Readonly<Record<string, NodeTypeName>>;
  /** Variables given the global id of the org the request acts in. */
  currentOrg?: readonly string[];
  /**
   * The variable given the global id of the membership the path names: its `:orgId` (or the org
   * the request acts in, where the path has none) and its `:userId`.
   */
  membership?: string;
  /** Body fields REST takes that the graph's input (or, for `body: 'variables'`, the operation's variables) has not (legacy ones), and how they become the graph's. */
  legacyInput?: LegacyInput;
}

/** Fields of a REST body beyond the graph's input type: read as its own (case-insensitively), then folded into it. */
export interface LegacyInput {
  /** Each field's name and schema, for the OpenAPI document (appended to the input's own). */
  fields: Readonly<Record<string, JsonSchema>>;
  /** Moves the fields read (present in `input` under their names) into the graph's input. */
  into(input: Record<string, unknown>): void;
}

const INT32 = 2 ** 31 - 1;

/**
 * A REST request's operation variables: path parameters by name (`Int` ones, and ids the graph
 * takes as global ids, parsed: 400 "id is invalid" otherwise, or "orgId is invalid" and "userId
 * is invalid" as the original names those), then the JSON body as `$input` or spread over the
 * remaining variables, then the org the request acts in where the row asks for it.
 */
export function restVariables(
  op: RestOperation,
  params: Record<string, string>,
  row: VariableMapping,
  body: Record<string, unknown> | undefined,
  orgId: () => number,
): Record<string, unknown> {
  const values: Record<string, unknown> = {};
  for (const [name, raw] of Object.entries(params)) {
    const variable = op.variables.get(name);
    if (!variable) continue;
    const node = row.ids?.[name];
    if (node || getNullableType(variable.type) === GraphQLInt) {
      const id = pathInt(name, raw);
      values[name] = node ? globalId(node, id) : id;
    } else if (raw.includes('\0')) throw badRequest();
    else values[name] = raw;
  }
  if (row.body === 'input' && body) {
    const input = op.variables.get('input');
    let fields = input?.fields ?? null;
    if (fields && row.legacyInput) fields = new Map([...fields, ...Object.keys(row.legacyInput.fields).map((f) => [f.toLowerCase(), f] as const)]);
    const read = fields ? inputFromBody(fields, body) : body;
    row.legacyInput?.into(read);
    values.input = read;
  } else if (row.body === 'variables' && (body || row.legacyInput)) {
    // A row with legacy keys reads them even from no body: its `into` may default or refuse what is absent.
    const declared = new Map([...op.variables.keys()].filter((k) => !(k in params)).map((k) => [k.toLowerCase(), k]));
    for (const field of Object.keys(row.legacyInput?.fields ?? {})) declared.set(field.toLowerCase(), field);
    const spread = body ? inputFromBody(declared, body) : {};
    row.legacyInput?.into(spread);
    for (const [name, value] of Object.entries(spread)) {
      const node = row.ids?.[name];
      values[name] = node ? bodyId(node, value) : value;
    }
  }
  for (const name of row.currentOrg ?? []) values[name] = globalId('Organization', orgId());
  if (row.membership) {
    const org = params.orgId === undefined ? orgId() : pathInt('orgId', params.orgId);
    values[row.membership] = encodeNodeId('OrganizationMember', `${org}:${pathInt('userId', params.userId ?? '')}`);
  }
  return values;
}

/** A path's integer parameter, read as GraphQL's `Int` reads one: 400 "<name> is invalid" otherwise. */
export function pathInt(name: string, raw: string): number {
  if (!/^-?\d{1,10}$/.test(raw) || Math.abs(Number(raw)) > INT32) throw new DomainError('BAD_REQUEST', MESSAGES.http.paramInvalid(name));
  return Number(raw);
}

/**
 * The global id of a numeric id REST takes, whatever it is: one below 1 names nothing, and the
 * service answers it as it answers such an id from REST.
 */
export function globalId(type: NodeTypeName, id: number): string {
  return encodeNodeId(type, id);
}

/** A numeric id of a JSON body as a global id; what GraphQL's `Int` would refuse is refused alike (400). */
export function bodyId(type: NodeTypeName, value: unknown): unknown {
  if (value === null || value === undefined) return value;
  if (typeof value !== 'number' || !Number.isInteger(value) || Math.abs(value) > INT32) throw badRequest();
  return globalId(type, value);
}

/** Go's `strconv.ParseBool` true values, which the original's `c.QueryBool` accepts. */
const TRUE = new Set(['1', 't', 'T', 'TRUE', 'true', 'True']);

/**
 * Query-string values for a route's declared parameters, read as the original reads them: an
 * integer that does not parse (or does not fit) is left out, so the default applies; a boolean is
 * true only for Go's true spellings; strings as given. A repeated parameter counts once, by its
 * first value, as Go's `Query().Get` reads it.
 */
export function queryVariables(op: RestOperation, url: string, names: Readonly<Record<string, string>>): Record<string, unknown> {
  const q = url.indexOf('?');
  const params = new URLSearchParams(q < 0 ? '' : url.slice(q + 1));
  const values: Record<string, unknown> = {};
  for (const [param, name] of Object.entries(names)) {
    const variable = op.variables.get(name);
    const raw = params.get(param);
    if (!variable || raw === null) continue;
    const type = getNullableType(variable.type);
    if (type === GraphQLInt) {
      if (/^[+-]?\d{1,10}$/.test(raw) && Math.abs(Number(raw)) <= INT32) values[name] = Number(raw);
    } else if (type === GraphQLBoolean) values[name] = TRUE.has(raw);
    // PostgreSQL can store no NUL character: refused, as in a path or a body.
    else if (raw.includes('\0')) throw badRequest();
    else values[name] = raw;
  }
  return values;
}
