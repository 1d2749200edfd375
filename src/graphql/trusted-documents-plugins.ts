import { createGraphQLError, type Plugin } from 'graphql-yoga';
import { usePersistedOperations } from '@graphql-yoga/plugin-persisted-operations';
import type { TrustedDocumentsMode } from '../config/settings.ts';
import { MESSAGES } from '../errors/messages.ts';
import { normalizeHash, type TrustedDocuments } from './trusted-documents.ts';

const refusal = (message: string, code: string) => ({ message, extensions: { code, http: { status: 400 } } });

/**
 * `[graphql] trusted_documents`: `allow` runs a trusted document sent by hash as well as any
 * document sent whole; `only` runs nothing else, a trusted document's exact text excepted. The hash
 * goes in `extensions.persistedQuery.sha256Hash` (Apollo's form) or `documentId` (the
 * persisted-documents convention, `sha256:` prefix optional; as a URL parameter on GET too). Refusals
 * carry the codes clients of persisted queries know: PERSISTED_QUERY_NOT_FOUND for an unknown hash,
 * PERSISTED_QUERY_NOT_IN_LIST for another document, PERSISTED_QUERY_ID_REQUIRED for neither.
 */
export function trustedDocumentsPlugins(mode: TrustedDocumentsMode, documents: TrustedDocuments): Plugin[] {
  if (mode === 'off') return [];
  const byText: Plugin = {
    // The exact text of a trusted document counts as that document, so clients need not switch to hashes at once.
    onParams({ params, setParams }) {
      if (mode !== 'only' || typeof params.query !== 'string') return;
      const hash = documents.hashByText.get(params.query);
      if (hash === undefined) return;
      setParams({ ...params, query: undefined, extensions: { ...params.extensions, persistedQuery: { version: 1, sha256Hash: hash } } });
    },
  };
  return [
    byText,
    usePersistedOperations({
      allowArbitraryOperations: mode === 'allow',
      getPersistedOperation: (key) => documents.byHash.get(normalizeHash(key)) ?? null,
      extractPersistedOperationId: (params, request) => {
        const persisted = (params.extensions as { persistedQuery?: { version?: unknown; sha256Hash?: unknown } } | undefined)?.persistedQuery;
        if (persisted?.version === 1 && typeof persisted.sha256Hash === 'string') return persisted.sha256Hash;
        const id = (params as { documentId?: unknown }).documentId ?? new URL(request.url).searchParams.get('documentId');
        return typeof id === 'string' && id !== '' ? id : null;
      },
      customErrors: {
        notFound: refusal(MESSAGES.trustedDocuments.notFound, 'PERSISTED_QUERY_NOT_FOUND'),
        persistedQueryOnly: refusal(MESSAGES.trustedDocuments.notInList, 'PERSISTED_QUERY_NOT_IN_LIST'),
        // Neither a document nor a hash: in `allow` mode, the answer every GraphQL server gives.
        keyNotFound: mode === 'allow'
          ? () => createGraphQLError(MESSAGES.trustedDocuments.noQuery, { extensions: { code: 'BAD_REQUEST', http: { status: 400 } } })
          : refusal(MESSAGES.trustedDocuments.idRequired, 'PERSISTED_QUERY_ID_REQUIRED'),
      },
    }) as Plugin,
  ];
}
