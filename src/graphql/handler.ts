import type { IncomingMessage, ServerResponse } from 'node:http';
import type { RequestContext } from '../context.ts';
import type { TrustedDocuments } from './trusted-documents.ts';

/** Serves one `/graphql` request whose context the front door built. */
export type GraphQLHandler = (ctx: RequestContext, req: IncomingMessage, res: ServerResponse) => Promise<void>;

export interface GraphQLHandlerOptions {
  /** The manifests `[graphql] trusted_documents` works from. */
  trustedDocuments?: TrustedDocuments;
}
