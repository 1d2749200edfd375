import { GraphQLBoolean, GraphQLInt, getNullableType } from 'graphql';
import { DomainError, badRequest } from '../errors/domain.ts';
import { MESSAGES } from '../errors/messages.ts';
import { inputFromBody, type RestOperation } from './executor.ts';

/** How a REST route's JSON body maps to its operation's variables. */
export type BodyMapping = 'input' | 'variables' | undefined;

/**
 * A REST request's operation variables: path parameters by name (`Int` ones parsed, 400 "id is
 * invalid" otherwise, or "orgId is invalid" and "userId is invalid" as the original names those),
 * then the JSON body as `$input` or spread over the remaining variables.
 */
export function restVariables(
  op: RestOperation,
  params: Record<string, string>,
  mapping: BodyMapping,
  body: Record<string, unknown> | undefined,
): Record<string, unknown> {
  const values: Record<string, unknown> = {};
  for (const [name, raw] of Object.entries(params)) {
    const variable = op.variables.get(name);
    if (!variable) continue;
    if (getNullableType(variable.type) === GraphQLInt) {
      if (!/^-?\d{1,10}$/.test(raw) || Math.abs(Number(raw)) > 2 ** 31 - 1) throw new DomainError('BAD_REQUEST', MESSAGES.http.paramInvalid(name));
      values[name] = Number(raw);
    } else if (raw.includes('\0')) throw badRequest();
    else values[name] = raw;
  }
  if (!mapping || !body) return values;
  if (mapping === 'input') {
    const input = op.variables.get('input');
    values.input = input?.fields ? inputFromBody(input.fields, body) : body;
  } else {
    const declared = new Map([...op.variables.keys()].filter((k) => !(k in params)).map((k) => [k.toLowerCase(), k]));
    Object.assign(values, inputFromBody(declared, body));
  }
  return values;
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
      if (/^[+-]?\d{1,10}$/.test(raw) && Math.abs(Number(raw)) <= 2 ** 31 - 1) values[name] = Number(raw);
    } else if (type === GraphQLBoolean) values[name] = TRUE.has(raw);
    // PostgreSQL can store no NUL character: refused, as in a path or a body.
    else if (raw.includes('\0')) throw badRequest();
    else values[name] = raw;
  }
  return values;
}
