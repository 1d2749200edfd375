import { GraphQLInt, getNullableType } from 'graphql';
import { DomainError, badRequest } from '../errors/domain.ts';
import { MESSAGES } from '../errors/messages.ts';
import { inputFromBody, type RestOperation } from './executor.ts';

/** How a REST route's JSON body maps to its operation's variables. */
export type BodyMapping = 'input' | 'variables' | undefined;

/**
 * A REST request's operation variables: path parameters by name (`Int` ones parsed, 400 "id is
 * invalid" otherwise), then the JSON body as `$input` or spread over the remaining variables.
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
      if (!/^-?\d{1,10}$/.test(raw) || Math.abs(Number(raw)) > 2 ** 31 - 1) throw new DomainError('BAD_REQUEST', MESSAGES.http.idInvalid);
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
