import {
  getNamedType, GraphQLError, isInterfaceType, isObjectType, Kind, type DocumentNode, type FragmentDefinitionNode, type GraphQLNamedType, type GraphQLSchema,
  type OperationDefinitionNode, type SelectionSetNode, type ValueNode,
} from 'graphql';
import type { Plugin } from 'graphql-yoga';
import { DEFAULT_PAGE_SIZE, isConnectionType, MAX_PAGE_SIZE } from './paging.ts';

/**
 * Most objects one request may ask connections for, counted as GitHub counts its node limit:
 * each connection's page size times the page sizes of the connections it sits in. The estimated
 * cost (`[graphql] max_cost`) is worked out during validation, where a page size sent as a variable
 * is unknown; this count runs with the variables' values, so `orgs(first: $a) { members(first: $b) }`
 * cannot ask for a million rows whatever the variables say. A thousand orgs of a thousand data
 * sources is over it; a page of a thousand, or ten orgs of a hundred, is far under it.
 */
export const MAX_REQUESTED_NODES = 100_000;

function pageSize(value: ValueNode | undefined, variables: Readonly<Record<string, unknown>>): number | null {
  if (!value) return null;
  const raw = value.kind === Kind.VARIABLE ? variables[value.name.value] : value.kind === Kind.INT ? Number(value.value) : null;
  // Out of range sizes are refused by the connection itself (400); here they count as its maximum.
  return typeof raw === 'number' && Number.isFinite(raw) ? Math.min(Math.max(raw, 0), MAX_PAGE_SIZE) : null;
}

/**
 * How many objects `operation` asks its connections for: for each connection field, its page
 * (`first`, else `last`, else the default page) times the pages around it. Pure: the schema, the
 * document and the variables' values in, a count out.
 */
export function requestedNodes(
  schema: GraphQLSchema, document: DocumentNode, operationName: string | null | undefined, variables: Readonly<Record<string, unknown>>,
): number {
  const operations = document.definitions.filter((d): d is OperationDefinitionNode => d.kind === Kind.OPERATION_DEFINITION);
  const operation = operationName ? operations.find((o) => o.name?.value === operationName) : operations[0];
  if (!operation) return 0;
  const fragments = new Map(document.definitions.filter((d): d is FragmentDefinitionNode => d.kind === Kind.FRAGMENT_DEFINITION).map((f) => [f.name.value, f]));
  const root = operation.operation === 'query' ? schema.getQueryType() : operation.operation === 'mutation' ? schema.getMutationType() : schema.getSubscriptionType();
  if (!root) return 0;

  let total = 0;
  const walk = (type: GraphQLNamedType, selections: SelectionSetNode, multiplier: number, inFragments: ReadonlySet<string>): void => {
    for (const selection of selections.selections) {
      if (selection.kind === Kind.INLINE_FRAGMENT) {
        const on = selection.typeCondition ? schema.getType(selection.typeCondition.name.value) : type;
        if (on) walk(on, selection.selectionSet, multiplier, inFragments);
      } else if (selection.kind === Kind.FRAGMENT_SPREAD) {
        const fragment = fragments.get(selection.name.value);
        const on = fragment && schema.getType(fragment.typeCondition.name.value);
        // A fragment that spreads itself is refused by validation; counted once here regardless.
        if (fragment && on && !inFragments.has(fragment.name.value)) walk(on, fragment.selectionSet, multiplier, new Set([...inFragments, fragment.name.value]));
      } else if (selection.selectionSet && (isObjectType(type) || isInterfaceType(type))) {
        const field = type.getFields()[selection.name.value];
        if (!field) continue;
        const fieldType = getNamedType(field.type);
        let inner = multiplier;
        if (isConnectionType(fieldType)) {
          const arg = (name: string) => selection.arguments?.find((a) => a.name.value === name)?.value;
          const size = pageSize(arg('first'), variables) ?? pageSize(arg('last'), variables) ?? DEFAULT_PAGE_SIZE;
          inner = multiplier * size;
          total += inner;
        }
        walk(fieldType, selection.selectionSet, inner, inFragments);
      }
    }
  };
  walk(root, operation.selectionSet, 1, new Set());
  return total;
}

/** Refuses, with a 400 before anything runs, an operation whose connections ask for more than `max` objects. */
export function useRequestedNodesLimit(max = MAX_REQUESTED_NODES): Plugin {
  // Per document and operation: whether it asks for a connection at all (most do not), found once.
  const asks = new WeakMap<DocumentNode, Map<string, boolean>>();
  return {
    onExecute({ args, setResultAndStopExecution }) {
      let byOperation = asks.get(args.document);
      if (!byOperation) asks.set(args.document, (byOperation = new Map()));
      const key = args.operationName ?? '';
      let asksConnections = byOperation.get(key);
      if (asksConnections === undefined) {
        asksConnections = requestedNodes(args.schema, args.document, args.operationName, {}) > 0;
        byOperation.set(key, asksConnections);
      }
      if (!asksConnections) return;
      const count = requestedNodes(args.schema, args.document, args.operationName, args.variableValues ?? {});
      if (count <= max) return;
      setResultAndStopExecution({
        errors: [new GraphQLError(`Query asks its connections for up to ${count} objects, more than the limit of ${max}: ask for smaller pages (first, last)`, {
          extensions: { code: 'BAD_USER_INPUT', http: { status: 400 } },
        })],
      });
    },
  };
}
