import {
  getNamedType, isInterfaceType, isObjectType, Kind,
  type FieldNode, type FragmentDefinitionNode, type GraphQLField, type GraphQLNamedType, type GraphQLSchema, type OperationDefinitionNode, type SelectionSetNode,
} from 'graphql';
import { signedIn, type Access } from '../auth/access.ts';
import { declaredAccess } from '../graphql/access.ts';

/** A field of an operation, found by the key it answers under, with the schema's definition. */
export interface AnswerStep {
  node: FieldNode;
  field: GraphQLField<unknown, unknown>;
}

/**
 * The fields a REST row's answer is reached through, one per key of `at` (response keys, aliases
 * included), through inline fragments and fragment spreads. Throws naming what is missing.
 */
export function answerSteps(
  schema: GraphQLSchema, operation: OperationDefinitionNode, fragments: ReadonlyMap<string, FragmentDefinitionNode>, at: readonly string[],
): AnswerStep[] {
  let type: GraphQLNamedType | null | undefined = operation.operation === 'mutation' ? schema.getMutationType() : operation.operation === 'subscription' ? schema.getSubscriptionType() : schema.getQueryType();
  let selectionSet: SelectionSetNode | undefined = operation.selectionSet;
  const steps: AnswerStep[] = [];
  for (const key of at) {
    const found: AnswerStep | null = selectionSet && type ? findField(schema, selectionSet, type, key, fragments) : null;
    if (!found) throw new Error(`REST operation ${operation.name?.value}: no field answers under "${key}" of ${at.join('.')}`);
    steps.push(found);
    type = getNamedType(found.field.type);
    selectionSet = found.node.selectionSet;
  }
  return steps;
}

/** The field answering under response key `key` of a selection set on `type`, through fragments. */
export function findField(
  schema: GraphQLSchema, set: SelectionSetNode, type: GraphQLNamedType, key: string, fragments: ReadonlyMap<string, FragmentDefinitionNode>,
): AnswerStep | null {
  for (const selection of set.selections) {
    if (selection.kind === Kind.FIELD) {
      if ((selection.alias?.value ?? selection.name.value) !== key) continue;
      const field = isObjectType(type) || isInterfaceType(type) ? type.getFields()[selection.name.value] : undefined;
      if (field) return { node: selection, field };
      continue;
    }
    const fragment = selection.kind === Kind.INLINE_FRAGMENT ? selection : fragments.get(selection.name.value);
    if (!fragment) continue;
    const condition = fragment.typeCondition ? schema.getType(fragment.typeCondition.name.value) : type;
    const found = condition ? findField(schema, fragment.selectionSet, condition, key, fragments) : null;
    if (found) return found;
  }
  return null;
}

/**
 * Who may call a REST row: the rule declared on the graph's fields it runs, read from there rather
 * than repeated on the row, as the row's door checks it in the org the request acts in.
 *
 * - A mutation, or any root field: its own rule. A field acting on an org named by an argument
 *   (`extensions.accessIn`) admits any signed-in caller at the door and applies its rule in that
 *   org, unless the row passes the org the request acts in there (`currentOrg`): then the rule is
 *   the door's.
 * - A path from a root field whose value is the org the request acts in (`extensions.requestOrg`)
 *   stays in that org: the door checks the last rule declared on the way, a field's own or, for a
 *   field answering a node type that declares one, its type's.
 *
 * `gate`, where the original's route admits fewer callers than the graph's field (a REST rule of
 * its own), replaces all this.
 */
export function rowAccess(steps: readonly AnswerStep[], currentOrg: readonly string[], gate?: Access): Access {
  if (gate) return gate;
  const [root, ...rest] = steps;
  if (!root) throw new Error('A REST row needs an answer');
  let access = declaredAccess(root.field);
  if (!access) throw new Error(`${root.field.name} declares no access rule`);
  const argument = (root.field.extensions as { accessIn?: string }).accessIn;
  if (argument) {
    const value = root.node.arguments?.find((a) => a.name.value === argument)?.value;
    return value?.kind === Kind.VARIABLE && currentOrg.includes(value.name.value) ? access : signedIn;
  }
  if (!(root.field.extensions as { requestOrg?: boolean }).requestOrg) return access;
  access = typeAccess(root.field) ?? access;
  for (const step of rest) access = declaredAccess(step.field) ?? typeAccess(step.field) ?? access;
  return access;
}

/**
 * A row whose root field applies its rule in the org an argument names (`accessIn`), given by the
 * path rather than the org the request acts in: that rule and the variable, for the door to check
 * once the path's variables are made, before the body's are coerced (the original's access
 * middleware answers 403 before its binding's 400).
 */
export function rowAccessIn(steps: readonly AnswerStep[], currentOrg: readonly string[], gate?: Access): { access: Access; variable: string } | null {
  const root = steps[0];
  const argument = (root?.field.extensions as { accessIn?: string } | undefined)?.accessIn;
  const access = root && declaredAccess(root.field);
  if (gate || !argument || !access) return null;
  const value = root.node.arguments?.find((a) => a.name.value === argument)?.value;
  return value?.kind === Kind.VARIABLE && !currentOrg.includes(value.name.value) ? { access, variable: value.name.value } : null;
}

/** The rule of the node type a field answers, if it declares one. */
function typeAccess(field: GraphQLField<unknown, unknown>): Access | undefined {
  const type = getNamedType(field.type);
  return isObjectType(type) ? declaredAccess(type) : undefined;
}
