import { describe, expect, it } from '@jest/globals';
import { GraphQLError, type ValidationContext, type ValidationRule } from 'graphql';
import { createSchema, createYoga, type Plugin } from 'graphql-yoga';
import { useValidationCache } from '../../src/graphql/validation-cache.ts';

// The validation cache of /graphql: a document is validated once per rule list, even though the
// limit plugins hand in rules made afresh for every request, and every request still gets the
// rules' verdict.

const schema = createSchema({ typeDefs: 'type Query { a: Int, b: Int }', resolvers: { Query: { a: () => 1, b: () => 2 } } });

/** Like the limit plugins: a new rule function per request; counts how often one really runs. */
function countingRule(counter: { runs: number }, refuse: string | null): Plugin {
  return {
    onValidate({ addValidationRule }) {
      const rule: ValidationRule = (context: ValidationContext) => {
        counter.runs++;
        return {
          Field(node) {
            if (node.name.value === refuse) context.reportError(new GraphQLError(`field ${refuse} refused`));
          },
        };
      };
      addValidationRule(rule);
    },
  };
}

/** Yoga as /graphql sets it up: its own validation cache off, this one after the rule plugins. */
function yogaWith(...plugins: Plugin[]) {
  return createYoga({ schema, plugins: [...plugins, useValidationCache()], parserAndValidationCache: { validationCache: false }, logging: false });
}

async function post(yoga: ReturnType<typeof createYoga>, query: string) {
  const response = await yoga.fetch('http://localhost/graphql', { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ query }) });
  return { status: response.status, body: await response.json() as { data?: unknown; errors?: Array<{ message: string }> } };
}

describe('GraphQL validation cache', () => {
  it('validates a repeated document once, and a new document again', async () => {
    const counter = { runs: 0 };
    const yoga = yogaWith(countingRule(counter, null));
    for (let i = 0; i < 3; i++) expect((await post(yoga, '{ a }')).body).toEqual({ data: { a: 1 } });
    expect(counter.runs).toBe(1);
    expect((await post(yoga, '{ b }')).body).toEqual({ data: { b: 2 } });
    expect(counter.runs).toBe(2);
  });

  it('answers every repeat of a refused document with the same refusal', async () => {
    const counter = { runs: 0 };
    const yoga = yogaWith(countingRule(counter, 'b'));
    const answers = [];
    for (let i = 0; i < 3; i++) answers.push(await post(yoga, '{ a b }'));
    expect(counter.runs).toBe(1);
    for (const answer of answers) {
      expect(answer.status).toBe(answers[0]!.status);
      expect(answer.body.errors?.map((error) => error.message)).toEqual(['field b refused']);
      expect(answer.body.data).toBeUndefined();
    }
  });

  it('validates again under a different rule list', async () => {
    const counter = { runs: 0 };
    let extra = false;
    const sometimes: Plugin = {
      onValidate({ addValidationRule }) {
        if (extra) addValidationRule(function OnlySometimesRule() { return {}; });
      },
    };
    const yoga = yogaWith(countingRule(counter, null), sometimes);
    await post(yoga, '{ a }');
    await post(yoga, '{ a }');
    expect(counter.runs).toBe(1);
    extra = true;
    await post(yoga, '{ a }');
    expect(counter.runs).toBe(2);
    await post(yoga, '{ a }');
    expect(counter.runs).toBe(2);
  });
});
