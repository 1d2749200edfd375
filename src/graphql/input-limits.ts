import {
  defaultFieldResolver, getNullableType, GraphQLID, GraphQLString, isInputObjectType, isListType, isObjectType, isScalarType,
  type GraphQLArgument, type GraphQLFieldResolver, type GraphQLInputType, type GraphQLSchema,
} from 'graphql';
import { badRequest } from '../errors/domain.ts';
import { MESSAGES } from '../errors/messages.ts';

/**
 * Length bounds on every string a client sends, checked on a field's arguments before its resolver
 * runs: a multi-megabyte name would otherwise reach the database layer, whose criteria handling
 * costs more than linear time in it and blocks the event loop for everyone. Being on the schema,
 * the bounds hold for GraphQL and for REST (whose bodies, path and query parameters are a root
 * field's arguments) alike, and for fields added later: every String and ID argument and input
 * field gets `DEFAULT_MAX_CHARS` unless its name is listed, every JSON value `MAX_JSON_BYTES`.
 *
 * The bounds are ceilings above the widest column (255): a value just past its column still
 * reaches its service, which answers it with the original server's own message.
 */
export const DEFAULT_MAX_CHARS = 1024;

/** Names whose purpose needs more room than a name or login. */
export const MAX_CHARS_BY_NAME: Readonly<Record<string, number>> = {
  // Data source URLs (checked at 255 by the service, as the original does) and other addresses.
  url: 4096,
};

/** Largest JSON value (jsonData, secureJsonData, ...), in bytes of its JSON text: real options are a few kilobytes. */
export const MAX_JSON_BYTES = 256 * 1024;

/** The first value of `args` (as coerced for `argDefs`) over its bound, as a ready 400; null when all fit. */
export function inputLimitViolation(argDefs: readonly Pick<GraphQLArgument, 'name' | 'type'>[], args: Record<string, unknown>): Error | null {
  for (const arg of argDefs) {
    const found = check(arg.type, args[arg.name], arg.name);
    if (found) return found;
  }
  return null;
}

function check(type: GraphQLInputType, value: unknown, name: string): Error | null {
  if (value === null || value === undefined) return null;
  const nullable = getNullableType(type);
  if (isListType(nullable)) {
    if (!Array.isArray(value)) return check(nullable.ofType, value, name);
    for (const item of value) {
      const found = check(nullable.ofType, item, name);
      if (found) return found;
    }
    return null;
  }
  if (isInputObjectType(nullable)) {
    const fields = nullable.getFields();
    for (const key of Object.keys(fields)) {
      const found = check(fields[key]!.type, (value as Record<string, unknown>)[key], key);
      if (found) return found;
    }
    return null;
  }
  if (nullable === GraphQLString || nullable === GraphQLID) {
    const max = MAX_CHARS_BY_NAME[name] ?? DEFAULT_MAX_CHARS;
    return typeof value === 'string' && value.length > max ? badRequest(MESSAGES.http.tooLong(name, max)) : null;
  }
  if (isScalarType(nullable) && (nullable.name === 'JSON' || nullable.name === 'JSONObject')) {
    return jsonBytesOver(value, MAX_JSON_BYTES) ? badRequest(MESSAGES.http.jsonTooLarge(name, MAX_JSON_BYTES)) : null;
  }
  return null;
}

/**
 * Whether `value`'s JSON text would be longer than `max` bytes, found without writing it and
 * stopping as soon as it is: strings by their UTF-8 length (their escapes aside), one byte per
 * punctuation mark, numbers and literals by their text.
 */
export function jsonBytesOver(value: unknown, max: number): boolean {
  let total = 0;
  const pending: unknown[] = [value];
  while (pending.length) {
    const next = pending.pop();
    if (typeof next === 'string') total += stringBytes(next, max - total) + 2;
    else if (next === null || typeof next !== 'object') total += String(next).length;
    else if (Array.isArray(next)) {
      // Brackets and the commas between items.
      total += 1 + Math.max(next.length, 1);
      for (const item of next) pending.push(item);
    } else {
      const entries = Object.entries(next);
      total += 1 + Math.max(entries.length, 1);
      for (const [key, item] of entries) {
        // The key in quotes, and its colon.
        total += stringBytes(key, max - total) + 3;
        pending.push(item);
      }
    }
    if (total > max) return true;
  }
  return false;
}

/** UTF-8 length, or just past `room` when the string is certainly longer than that (UTF-8 never has fewer bytes than UTF-16 units). */
function stringBytes(text: string, room: number): number {
  return text.length > room ? room + 1 : Buffer.byteLength(text, 'utf8');
}

/**
 * Wraps the resolver (and subscriber) of every field with an argument that can carry a string,
 * so its arguments are checked before it runs. Called once, when the schema is built.
 */
export function enforceInputLimits(schema: GraphQLSchema): void {
  for (const type of Object.values(schema.getTypeMap())) {
    if (!isObjectType(type) || type.name.startsWith('__')) continue;
    for (const field of Object.values(type.getFields())) {
      const bounded = field.args.filter((arg) => carriesText(arg.type, new Set()));
      if (bounded.length === 0) continue;
      // A subscription's arguments are checked once, when it opens: its resolver runs per event with the same ones.
      if (field.subscribe) field.subscribe = checked(bounded, field.subscribe);
      else field.resolve = checked(bounded, field.resolve ?? defaultFieldResolver);
    }
  }
}

function checked(args: readonly GraphQLArgument[], resolve: GraphQLFieldResolver<unknown, unknown>): GraphQLFieldResolver<unknown, unknown> {
  return (source, values, ctx, info) => {
    const violation = inputLimitViolation(args, values);
    if (violation) throw violation;
    return resolve(source, values, ctx, info);
  };
}

/** Whether a value of `type` can hold a string or JSON anywhere (`seen` breaks input types that contain themselves). */
function carriesText(type: GraphQLInputType, seen: Set<GraphQLInputType>): boolean {
  const nullable = getNullableType(type);
  if (isListType(nullable)) return carriesText(nullable.ofType, seen);
  if (isInputObjectType(nullable)) {
    if (seen.has(nullable)) return false;
    seen.add(nullable);
    return Object.values(nullable.getFields()).some((f) => carriesText(f.type, seen));
  }
  return nullable === GraphQLString || nullable === GraphQLID || (isScalarType(nullable) && (nullable.name === 'JSON' || nullable.name === 'JSONObject'));
}
