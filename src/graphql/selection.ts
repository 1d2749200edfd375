import { Kind, type FieldNode, type FragmentDefinitionNode, type SelectionSetNode } from 'graphql';

/**
 * Whether the field being resolved selects no field of its object but those of `allowed`, through
 * fragments of any type condition and whatever their directives say (a field a directive may skip
 * counts as selected): for a resolver that can skip reading a row when nothing asked needs it.
 */
export function selectsOnly(
  info: { fieldNodes: readonly FieldNode[]; fragments: Record<string, FragmentDefinitionNode> },
  allowed: ReadonlySet<string>,
): boolean {
  const seen = new Set<string>();
  const only = (set: SelectionSetNode | undefined): boolean => {
    for (const selection of set?.selections ?? []) {
      if (selection.kind === Kind.FIELD) {
        if (!allowed.has(selection.name.value)) return false;
      } else if (selection.kind === Kind.INLINE_FRAGMENT) {
        if (!only(selection.selectionSet)) return false;
      } else if (!seen.has(selection.name.value)) {
        seen.add(selection.name.value);
        const fragment = info.fragments[selection.name.value];
        // A fragment the document does not define never reaches a resolver; if it did, assume the worst.
        if (!fragment || !only(fragment.selectionSet)) return false;
      }
    }
    return true;
  };
  return info.fieldNodes.every((node) => only(node.selectionSet));
}
