import { readFileSync } from 'node:fs';
import { describe, expect, it } from '@jest/globals';
import { parse, validate } from 'graphql';
import { getSchema, printSdl } from '../src/graphql/schema/index.ts';

describe('committed GraphQL SDL', () => {
  it('matches the schema the code builds (run `npm run schema:print` after changing it)', () => {
    const committed = readFileSync(new URL('../schema/schema.graphql', import.meta.url), 'utf8');
    expect(committed).toBe(printSdl());
  });

  it('validates every REST operation against the schema', () => {
    const document = parse(readFileSync(new URL('../schema/rest-operations.graphql', import.meta.url), 'utf8'));
    expect(validate(getSchema(), document)).toEqual([]);
  });
});
