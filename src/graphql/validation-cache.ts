import type { DocumentNode, GraphQLError, GraphQLSchema, ValidationRule } from 'graphql';
import type { Plugin } from 'graphql-yoga';

/** Validation results of one rule list, by schema and then by parsed document. */
interface RuleListCache {
  /** The rules as first seen, and their names. */
  rules: readonly ValidationRule[];
  names: readonly string[];
  bySchema: WeakMap<GraphQLSchema, WeakMap<DocumentNode, readonly GraphQLError[]>>;
}

/** Distinct rule lists remembered; the plugins here add the same one to every request. */
const MAX_RULE_LISTS = 8;

/**
 * Yoga's validation cache, for less per request. Both know a rule list by its rules' names, as the
 * limit plugins make their rules afresh for every request; yoga joins the 30-odd names into a
 * string and looks it up in an LRU cache each time, while here they are compared in place with the
 * lists seen before. Results are kept by document, which yoga's parser cache hands back the same
 * for the same query text, so an entry lives as long as that cache keeps the document. Registered
 * after every plugin that adds rules, so it sees the whole list.
 */
export function useValidationCache(): Plugin {
  const lists: RuleListCache[] = [];
  const cacheFor = (rules: readonly ValidationRule[]): RuleListCache => {
    for (const list of lists) if (sameRules(list, rules)) return list;
    const list = { rules: [...rules], names: rules.map((rule) => rule.name), bySchema: new WeakMap() };
    if (lists.unshift(list) > MAX_RULE_LISTS) lists.pop();
    return list;
  };
  return {
    onValidate({ params: { schema, documentAST, rules }, setResult }) {
      if (!schema || !rules) return;
      const { bySchema } = cacheFor(rules);
      let byDocument = bySchema.get(schema);
      if (!byDocument) bySchema.set(schema, (byDocument = new WeakMap()));
      const cached = byDocument.get(documentAST);
      if (cached) {
        setResult(cached);
        return;
      }
      return ({ result }) => {
        // graphql's validate, which yields GraphQLErrors only.
        byDocument.set(documentAST, result as readonly GraphQLError[]);
      };
    },
  };
}

/**
 * The same rules by name. Most are the same functions on every request (graphql's own), which
 * settles them without reading `name`: that read costs far more, as the rules are functions of
 * many shapes.
 */
function sameRules(list: RuleListCache, rules: readonly ValidationRule[]): boolean {
  if (list.names.length !== rules.length) return false;
  for (let i = 0; i < rules.length; i++) {
    const rule = rules[i]!;
    if (rule !== list.rules[i] && rule.name !== list.names[i]) return false;
  }
  return true;
}
