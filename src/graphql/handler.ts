import type { IncomingMessage, ServerResponse } from 'node:http';
import type { RequestContext } from '../context.ts';
import type { Tracing } from '../tracing/index.ts';
import type { TrustedDocuments } from './trusted-documents.ts';

/** Serves one `/graphql` request whose context the front door built and whose body it read (null when empty). */
export type GraphQLHandler = (ctx: RequestContext, req: IncomingMessage, res: ServerResponse, body: Buffer | null) => Promise<void>;

export interface GraphQLHandlerOptions {
  /** The manifests `[graphql] trusted_documents` works from. */
  trustedDocuments?: TrustedDocuments;
  /** Off: every request goes through yoga's HTTP pipeline (tests compare the direct path with it). */
  directPath?: boolean;
  /** A span per operation; none when absent or null (tracing off). */
  tracing?: Tracing | null;
}
