import { readFileSync } from 'node:fs';
import { describe, expect, it } from '@jest/globals';
import { parse, validate } from 'graphql';
import { getSchema } from '../../src/graphql/schema/index.ts';

// Every GraphQL document the README and the GraphQL guide show (in a curl body, a GET's query or a
// graphql block) is valid against the schema as it is: a field renamed or removed fails here
// before a reader copies the example.

const pages = ['README.md', 'docs/graphql.md'].map((page) => [page, readFileSync(new URL(`../../${page}`, import.meta.url), 'utf8')] as const);

function documents(text: string): string[] {
  const found: string[] = [];
  // A JSON body's "query" member: its string literal, as the shell passes it.
  for (const m of text.matchAll(/"query":\s*("(?:[^"\\]|\\.)*")/g)) found.push(JSON.parse(m[1]!) as string);
  // A GET's --data-urlencode 'query=...'.
  for (const m of text.matchAll(/--data-urlencode 'query=([^']*)'/g)) found.push(m[1]!);
  // graphql blocks, several documents apart by their `# N.` comments.
  for (const m of text.matchAll(/```graphql\n([\s\S]*?)```/g)) found.push(...m[1]!.split(/^# .*$/m).map((d) => d.trim()).filter(Boolean));
  return found;
}

describe('GraphQL examples in the documentation', () => {
  const schema = getSchema();
  it.each(pages)('%s: each document is valid against the schema', (_page, text) => {
    const docs = documents(text);
    expect(docs.length).toBeGreaterThan(0);
    const invalid = docs.map((doc) => [doc, validate(schema, parse(doc)).map((e) => e.message)] as const).filter(([, errors]) => errors.length > 0);
    expect(invalid).toEqual([]);
  });
});
