import { compileQuery, isCompiledQuery, type CompiledQuery } from 'graphql-jit';
import {
  getNamedType, GraphQLError, isInputObjectType, Kind, parse, typeFromAST, validate, visit,
  type ASTNode, type DocumentNode, type FragmentDefinitionNode, type GraphQLInputType, type GraphQLSchema, type OperationDefinitionNode,
} from 'graphql';
import type { Access } from '../auth/access.ts';
import type { RequestContext } from '../context.ts';
import { badRequest, DomainError, notFound, type ErrorCode } from '../errors/domain.ts';
import { answerSteps, rowAccess, rowAccessIn, type AnswerStep } from './access.ts';
import { compileWire, type Shaper, type Wire } from './wire.ts';

/**
 * What a REST row runs: one GraphQL operation over the graph, prepared at start-up, and the key
 * path in its answer to the value the REST answer is made of.
 */
export interface RestOperation {
  name: string;
  /** The operation with the fragments it uses. */
  document: DocumentNode;
  /** Response keys from the data to the REST answer's value (`currentOrganization.dataSources.nodes`). */
  answer: readonly string[];
  /** The fields those keys answer under. */
  steps: readonly AnswerStep[];
  /** The door's rule: declared on the graph's fields (see `rowAccess`), or the row's own gate. */
  access: Access;
  /** The rule the door checks in the org a path variable names, where the root field applies it there (see `rowAccessIn`). */
  accessIn: { access: Access; variable: string } | null;
  /** Declared variables, each with its case-insensitive field lookup when it is an input object. */
  variables: Map<string, { type: GraphQLInputType; fields: Map<string, string> | null }>;
  /** The schema it was checked against and compiles against. */
  schema: GraphQLSchema;
  /** Whether its document was validated against the schema (`compileRestFunction` does it first). */
  validated: boolean;
  /** The operation compiled to a function (graphql-jit), once `compileRestFunction` has run. */
  compiled: CompiledQuery | null;
  /** Writes the REST answer from the value, where the wire has what the graph has not. */
  shape: Shaper | null;
}

/** A row's document and where its answer is, as the route table gives them. */
export interface RestSource {
  source: string;
  /** Dotted response keys to the answer's value; the single root field's key by default. */
  at?: string;
  /** Variables the row fills with the global id of the org the request acts in. */
  currentOrg?: readonly string[];
  /** A door rule of the REST row's own, where the original admits fewer callers than the graph. */
  gate?: Access;
  /** The wire shape of the answer, where it is not the value as it is. */
  shape?: Wire;
}

/** What a row answers when its value is null (nothing found, or not the caller's to see): a value, or the error thrown. */
export type Missing = (ctx: RequestContext, variables: Record<string, unknown>) => unknown;

/**
 * A row's `missing` answer where the graph answered null: the service's own lookup, run for its
 * refusal (404, or 403 naming the action); should it find the object now (made since the graph
 * looked), it was not there to answer: not found all the same.
 */
export function serviceRefusal(lookup: (ctx: RequestContext, variables: Record<string, unknown>) => Promise<unknown>, notFoundMessage: string): Missing {
  return async (ctx, variables) => {
    await lookup(ctx, variables);
    throw notFound(notFoundMessage);
  };
}

/**
 * Every REST row's operation, ready to run but not yet validated: parsed, with the fragments it
 * uses, its answer's path and its door's rule. What start-up needs, and a fraction of validating
 * them all; `compileRestFunction` validates each before compiling it, in the turns after start-up
 * or at its first request, and the suite checks them all at once (`checkRestOperations`).
 */
export function prepareRestOperations(schema: GraphQLSchema, sources: readonly RestSource[], fragments: string): RestOperation[] {
  const fragmentDefinitions = fragments.trim() ? parse(fragments).definitions.filter((d): d is FragmentDefinitionNode => d.kind === Kind.FRAGMENT_DEFINITION) : [];
  const byName = new Map(fragmentDefinitions.map((f) => [f.name.value, f]));
  return sources.map((source) => {
    const definition = parse(source.source).definitions.find((d): d is OperationDefinitionNode => d.kind === Kind.OPERATION_DEFINITION);
    if (!definition?.name) throw new Error(`REST operation must be one named operation: ${source.source}`);
    const document = { kind: Kind.DOCUMENT, definitions: [definition, ...fragmentsUsedBy(definition, fragmentDefinitions)] } as DocumentNode;
    return restOperation(schema, definition, document, byName, source);
  });
}

/**
 * Prepares and validates every REST row's operation at once, naming the first that is wrong. The
 * shared fragments are validated once, with all the operations as one document, rather than once
 * per row using them.
 */
export function checkRestOperations(schema: GraphQLSchema, sources: readonly RestSource[], fragments: string): RestOperation[] {
  const fragmentDefinitions = fragments.trim() ? parse(fragments).definitions.filter((d): d is FragmentDefinitionNode => d.kind === Kind.FRAGMENT_DEFINITION) : [];
  const parsed = sources.map(({ source }) => {
    const definition = parse(source).definitions.find((d): d is OperationDefinitionNode => d.kind === Kind.OPERATION_DEFINITION);
    if (!definition?.name) throw new Error(`REST operation must be one named operation: ${source}`);
    return { definition, document: { kind: Kind.DOCUMENT, definitions: [definition, ...fragmentsUsedBy(definition, fragmentDefinitions)] } as DocumentNode };
  });
  // Every fragment some operation uses, once (an unused one would fail validation).
  const used = new Set(parsed.flatMap((p) => p.document.definitions.slice(1)));
  const all: DocumentNode = { kind: Kind.DOCUMENT, definitions: [...parsed.map((p) => p.definition), ...fragmentDefinitions.filter((f) => used.has(f))] };
  const errors = validate(schema, all);
  if (errors.length) {
    // Rare (a wrong document fails its test first): validate one by one to name the culprit.
    for (const { definition, document } of parsed) validateOperation(schema, definition.name!.value, document);
    throw new Error(`REST operations are invalid together: ${errors.map((e) => e.message).join('; ')}`);
  }
  const byName = new Map(fragmentDefinitions.map((f) => [f.name.value, f]));
  return parsed.map(({ definition, document }, i) => ({ ...restOperation(schema, definition, document, byName, sources[i]!), validated: true }));
}

function validateOperation(schema: GraphQLSchema, name: string, document: DocumentNode): void {
  const errors = validate(schema, document);
  if (errors.length) throw new Error(`REST operation ${name} is invalid: ${errors.map((e) => e.message).join('; ')}`);
}

function restOperation(
  schema: GraphQLSchema, definition: OperationDefinitionNode, document: DocumentNode, fragments: ReadonlyMap<string, FragmentDefinitionNode>, source: RestSource,
): RestOperation {
  const name = definition.name!.value;
  const roots = definition.selectionSet.selections.filter((s) => s.kind === Kind.FIELD);
  if (roots.length !== 1) throw new Error(`REST operation ${name} must select exactly one root field`);
  const root = roots[0]!;
  const answer = source.at ? source.at.split('.') : [root.alias?.value ?? root.name.value];
  const steps = answerSteps(schema, definition, fragments, answer);
  const variables: RestOperation['variables'] = new Map();
  for (const v of definition.variableDefinitions ?? []) {
    const type = typeFromAST(schema, v.type as never) as GraphQLInputType;
    const named = getNamedType(type);
    const fields = isInputObjectType(named) ? new Map(Object.keys(named.getFields()).map((f) => [f.toLowerCase(), f])) : null;
    variables.set(v.variable.name.value, { type, fields });
  }
  for (const variable of source.currentOrg ?? []) {
    if (!variables.has(variable)) throw new Error(`REST operation ${name} declares no $${variable} for the org the request acts in`);
  }
  const shape = source.shape ? compileWire(source.shape) : null;
  const currentOrg = source.currentOrg ?? [];
  return { name, document, schema, validated: false, compiled: null, answer, steps, access: rowAccess(steps, currentOrg, source.gate), accessIn: rowAccessIn(steps, currentOrg, source.gate), variables, shape };
}

/**
 * Validates an operation, then compiles it with graphql-jit, which turns it into a function calling
 * the schema's own resolvers: about a third less CPU per request than interpreting it with
 * `execute()`. The front door compiles every route this way in the turns after start-up; a request
 * reaching a route before that compiles it first.
 */
export function compileRestFunction(op: RestOperation): CompiledQuery {
  if (op.compiled) return op.compiled;
  if (!op.validated) {
    validateOperation(op.schema, op.name, op.document);
    op.validated = true;
  }
  const compiled = compileQuery(op.schema, op.document, op.name);
  if (!isCompiledQuery(compiled)) throw new Error(`REST operation ${op.name} cannot be compiled: ${compiled.errors?.map((e) => e.message).join('; ')}`);
  return (op.compiled = compiled);
}

/** One row's operation, checked and compiled at once (for tests and tools). */
export function compileRestOperation(schema: GraphQLSchema, source: RestSource | string, fragments: string): RestOperation {
  const [op] = checkRestOperations(schema, [typeof source === 'string' ? { source } : source], fragments);
  compileRestFunction(op!);
  return op!;
}

/**
 * Runs a compiled operation for a request the row's door already let in, and answers the REST
 * answer: the value at the row's answer path, shaped. Errors are thrown as they came, for the one
 * renderer: a resolver's own error, the error behind a mutation payload's user errors (with its
 * whole wire body), or 400 for variables GraphQL refused. A null on the way is the row's
 * `missing` answer (404 by default).
 */
export async function runRestOperation(op: RestOperation, ctx: RequestContext, variableValues: Record<string, unknown>, missing?: Missing): Promise<unknown> {
  ctx.authorizedAs = op.access;
  ctx.rest = true;
  const result = await (op.compiled ?? compileRestFunction(op)).query(undefined, ctx, variableValues);
  const error = result.errors?.[0];
  if (error) {
    const original = error.originalError;
    // Variable coercion failures (wrong JSON types, missing required fields) have no original error.
    throw !original || original instanceof GraphQLError ? badRequest() : original;
  }
  let value: unknown = result.data;
  for (const key of op.answer) {
    value = (value as Record<string, unknown> | null)?.[key];
    if (value === null || value === undefined) {
      if (!missing) throw notFound();
      value = await missing(ctx, variableValues);
      break;
    }
    const userErrors = (value as { userErrors?: Array<{ code: string; message: string }> }).userErrors;
    if (userErrors?.length) throw ctx.userError ?? new DomainError(userErrors[0]!.code as ErrorCode, userErrors[0]!.message);
  }
  return op.shape ? op.shape(value, variableValues) : value;
}

/** Matches body keys to the input type's fields case-insensitively, as Go's JSON decoding does. */
export function inputFromBody(fields: Map<string, string>, body: Record<string, unknown>): Record<string, unknown> {
  const input: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(body)) {
    const field = fields.get(key.toLowerCase());
    if (field !== undefined) input[field] = value;
  }
  return input;
}

/** The fragments an operation needs, transitively. */
function fragmentsUsedBy(operation: OperationDefinitionNode, fragments: readonly FragmentDefinitionNode[]): FragmentDefinitionNode[] {
  const byName = new Map(fragments.map((f) => [f.name.value, f]));
  const used = new Set<string>();
  const pending: ASTNode[] = [operation];
  while (pending.length) {
    visit(pending.pop()!, {
      FragmentSpread(node) {
        if (used.has(node.name.value)) return;
        used.add(node.name.value);
        const fragment = byName.get(node.name.value);
        if (fragment) pending.push(fragment);
      },
    });
  }
  return fragments.filter((f) => used.has(f.name.value));
}
