import type { CodegenConfig } from '@graphql-codegen/cli';

// Paths are relative to this file, so the config works from any working directory.
const here = (path: string) => new URL(path, import.meta.url).pathname;

/** Types for every `graphql(...)` document in src/, from the committed server schema. */
const config: CodegenConfig = {
  schema: here('../../schema/schema.graphql'),
  documents: [here('src/**/*.ts'), `!${here('src/gql/**')}`],
  ignoreNoDocuments: false,
  generates: {
    [here('src/gql/')]: {
      preset: 'client',
      presetConfig: {
        // Plain strings instead of parsed ASTs: no graphql runtime in the browser bundle.
        fragmentMasking: false,
        // Writes src/gql/persisted-documents.json, the manifest a server with [graphql]
        // trusted_documents loads, and gives each document its hash (`__meta__.hash`).
        persistedDocuments: { hashAlgorithm: 'sha256' },
      },
      config: {
        documentMode: 'string',
        useTypeImports: true,
        importExtension: '.ts',
        enumsAsTypes: true,
        scalars: { JSON: 'unknown', JSONObject: 'Record<string, unknown>' },
      },
    },
  },
};

export default config;
