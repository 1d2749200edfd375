import { EnvelopArmorPlugin } from '@escape.tech/graphql-armor';
import { GraphQLError, NoSchemaIntrospectionCustomRule, type ValidationContext } from 'graphql';
import { createGraphQLError, type Plugin } from 'graphql-yoga';
import type { Settings } from '../config/settings.ts';

/** The header that marks a GraphQL request as sent by script, not by a cross-site form or link. */
export const CSRF_HEADER = 'x-graphql-yoga-csrf';

/** Content types a cross-site page can send without a CORS preflight. */
const SIMPLE_CONTENT_TYPES = new Set(['application/x-www-form-urlencoded', 'multipart/form-data', 'text/plain']);

/** Limits with no setting of their own: generous for any real client, tight enough for the parser. */
const MAX_TOKENS = 2000;
const MAX_DIRECTIVES = 50;

/** The `[graphql]` production switches as yoga plugins: introspection, query limits, CSRF prevention. */
export function protectionPlugins(config: Settings['graphql']): Plugin[] {
  // Armor words every limit as "Syntax Error: ..."; report it as the validation error it is.
  const limit = { propagateOnRejection: false, onReject: [reportLimit] };
  const plugins: Plugin[] = [
    EnvelopArmorPlugin({
      maxDepth: { n: config.maxDepth, ...limit },
      maxAliases: { n: config.maxAliases, ...limit },
      costLimit: { maxCost: config.maxCost, ...limit },
      maxDirectives: { n: MAX_DIRECTIVES, ...limit },
      // Counted while parsing, before there is a validation context to report to.
      maxTokens: { n: MAX_TOKENS },
      // "Did you mean ...?" hints would reveal the schema that disabled introspection hides.
      blockFieldSuggestion: { enabled: !config.introspection },
    }) as Plugin,
    rejectInvalidWith400(),
  ];
  if (!config.introspection) {
    plugins.push({ onValidate: ({ addValidationRule }) => addValidationRule(NoSchemaIntrospectionCustomRule) });
  }
  if (config.csrfPrevention) plugins.push(CSRF_PREVENTION);
  return plugins;
}

function reportLimit(context: ValidationContext | null, error: GraphQLError): void {
  context?.reportError(new GraphQLError(error.message.replace(/^Syntax Error: /, '')));
}

/**
 * Yoga marks parse and validation errors as answered with 200 to `Accept: application/json`
 * clients (as the GraphQL-over-HTTP spec allows for legacy clients); every client here gets their
 * 400 instead. Flipped once the result is final, after yoga's own hooks have set the mark.
 */
function rejectInvalidWith400(): Plugin {
  return {
    onResultProcess({ result }) {
      for (const single of Array.isArray(result) ? result : [result]) {
        if (!('errors' in single)) continue;
        for (const error of single.errors ?? []) {
          const http = error.extensions?.http as { spec?: boolean } | undefined;
          if (http?.spec) http.spec = false;
        }
      }
    },
  };
}

/**
 * Browsers send Basic credentials they remember along with cross-site "simple" requests (a form
 * post, an image or link GET), so those must not run operations. A request with a non-simple
 * content type (JSON) or the CSRF header needs a CORS preflight, which other origins fail.
 * GraphiQL's page itself is served before this check.
 */
export function passesCsrfCheck(hasCsrfHeader: boolean, contentType: string | null | undefined): boolean {
  if (hasCsrfHeader) return true;
  const mediaType = contentType?.split(';')[0]?.trim().toLowerCase();
  return Boolean(mediaType) && !SIMPLE_CONTENT_TYPES.has(mediaType!);
}

/** The check as yoga's plugin; the direct path (direct-path.ts) applies `passesCsrfCheck` itself. */
export const CSRF_PREVENTION: Plugin = {
  onRequestParse({ request }) {
    if (passesCsrfCheck(request.headers.has(CSRF_HEADER), request.headers.get('content-type'))) return;
    throw createGraphQLError(
      `Request refused as a possible cross-site request forgery: send Content-Type: application/json or a ${CSRF_HEADER} header`,
      { extensions: { code: 'CSRF_PREVENTED', http: { status: 403 } } },
    );
  },
};
