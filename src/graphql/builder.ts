import SchemaBuilder from '@pothos/core';
import type { RequestContext } from '../context.ts';

/** Builder configuration only; types live one per file under schema/. */
export const builder = new SchemaBuilder<{
  Context: RequestContext;
  DefaultFieldNullability: false;
  Scalars: {
    JSON: { Input: unknown; Output: unknown };
    JSONObject: { Input: Record<string, unknown>; Output: Record<string, unknown> };
  };
}>({
  defaultFieldNullability: false,
});

builder.queryType({ description: 'Read access to data sources and server administration.' });
builder.mutationType({ description: 'Changes to data sources, users, tokens and alerting.' });
