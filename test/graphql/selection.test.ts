import { describe, expect, it } from '@jest/globals';
import { Kind, parse, type FieldNode, type FragmentDefinitionNode, type OperationDefinitionNode } from 'graphql';
import { selectsOnly } from '../../src/graphql/selection.ts';

/** The info a resolver of the operation's first root field gets (its field nodes and the document's fragments). */
function infoOf(document: string): { fieldNodes: FieldNode[]; fragments: Record<string, FragmentDefinitionNode> } {
  const parsed = parse(document);
  const operation = parsed.definitions.find((d): d is OperationDefinitionNode => d.kind === Kind.OPERATION_DEFINITION)!;
  const fragments = Object.fromEntries(parsed.definitions.filter((d): d is FragmentDefinitionNode => d.kind === Kind.FRAGMENT_DEFINITION).map((f) => [f.name.value, f]));
  const first = operation.selectionSet.selections[0] as FieldNode;
  // Fields of one response key are merged: every root field named as the first one.
  const fieldNodes = operation.selectionSet.selections.filter((s): s is FieldNode => s.kind === Kind.FIELD && s.name.value === first.name.value);
  return { fieldNodes, fragments };
}

const ALLOWED = new Set(['id', 'currentOrganization', '__typename']);

describe('selectsOnly', () => {
  it.each([
    ['only allowed fields', '{ viewer { id currentOrganization { name } } }', true],
    ['aliases count by field name', '{ viewer { me: id org: currentOrganization { name } } }', true],
    ['a field outside the set', '{ viewer { id login } }', false],
    ['inside an inline fragment', '{ viewer { ... on User { login } } }', false],
    ['allowed fields inside an inline fragment', '{ viewer { ... on User { id } } }', true],
    ['inside a named fragment', '{ viewer { ...Me } } fragment Me on Actor { name }', false],
    ['a named fragment of allowed fields, spread twice', '{ viewer { ...Me ...Me } } fragment Me on Actor { id __typename }', true],
    ['a field a directive may skip', '{ viewer { id login @skip(if: true) } }', false],
    ['in a second field node of the same key', '{ viewer { id } viewer { login } }', false],
    ['a fragment the document lacks', '{ viewer { ...Missing } }', false],
    ['no subselection of its own fields', '{ viewer { __typename } }', true],
  ])('%s', (_name, document, expected) => {
    expect(selectsOnly(infoOf(document), ALLOWED)).toBe(expected);
  });

  it('follows fragments that spread each other once, without looping', () => {
    const info = infoOf('{ viewer { ...A } } fragment A on Actor { id ...B } fragment B on Actor { __typename ...A }');
    expect(selectsOnly(info, ALLOWED)).toBe(true);
  });
});
