import type { Plugin } from 'graphql-yoga';

/** Media types whose error answers already carry GraphQL errors (in JSON, or as stream events). */
const CARRIES_ERRORS = /^(application\/json|application\/graphql-response\+json|text\/event-stream|multipart\/mixed)\b/;

const MESSAGES: Record<number, string> = {
  406: 'Not Acceptable: accept application/json or application/graphql-response+json',
  415: 'Unsupported Media Type: send application/json',
};

/**
 * yoga answers some refusals (415 for a content type it cannot parse, 406 for an Accept header it
 * cannot satisfy) with an empty body; clients get `{"errors":[{"message"}]}` like every other error.
 */
export function useJsonErrorBodies(): Plugin {
  return {
    onResponse({ response, setResponse, fetchAPI }) {
      if (response.status < 400 || CARRIES_ERRORS.test(response.headers.get('content-type') ?? '')) return;
      const message = MESSAGES[response.status] ?? (response.statusText || 'request refused');
      const headers = new fetchAPI.Headers(response.headers);
      headers.set('content-type', 'application/json; charset=utf-8');
      headers.delete('content-length');
      setResponse(new fetchAPI.Response(JSON.stringify({ errors: [{ message, extensions: { code: 'BAD_REQUEST' } }] }), { status: response.status, headers }));
    },
  };
}
