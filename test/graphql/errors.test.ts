import { describe, expect, it } from '@jest/globals';
import { Writable } from 'node:stream';
import { createSchema, createYoga } from 'graphql-yoga';
import { maskError, useMaskedErrorLog } from '../../src/graphql/errors.ts';
import { DomainError } from '../../src/errors/domain.ts';
import { createLogger } from '../../src/logging/logger.ts';

// A real yoga over a small schema whose resolvers fail the ways real ones can: the masked error's
// log line carries the request's id and the engine's message, the answer carries neither.

function logged(): { lines: Array<Record<string, unknown>>; log: ReturnType<typeof createLogger> } {
  const lines: Array<Record<string, unknown>> = [];
  const sink = new Writable({ write(chunk: Buffer, _enc, done) { lines.push(JSON.parse(chunk.toString()) as Record<string, unknown>); done(); } });
  return { lines, log: createLogger('info', sink) };
}

describe('masked GraphQL errors', () => {
  const { lines, log } = logged();
  const yoga = createYoga<{ requestId: string }>({
    schema: createSchema({
      typeDefs: 'type Query { deep: Int, known: Int, fine: Int }',
      resolvers: {
        Query: {
          deep: () => {
            const recurse = (n: number): number => recurse(n + 1) + 1;
            return recurse(0);
          },
          known: () => { throw new DomainError('NOT_FOUND', 'Data source not found'); },
          fine: () => 1,
        },
      },
    }),
    logging: false,
    plugins: [useMaskedErrorLog(log)],
    maskedErrors: { maskError: (error, message) => maskError(error, message) },
  });

  it('logs an unexpected error once with the request id, and answers the fixed message', async () => {
    const res = await yoga.fetch('http://x/graphql', {
      method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ query: '{ deep known fine }' }),
    }, { requestId: 'req-42' });
    const body = await res.text();
    expect(body).not.toContain('Maximum call stack');
    expect(body).not.toContain('req-42');
    const answer = JSON.parse(body) as { data: unknown; errors: Array<{ message: string; path: string[] }> };
    expect(answer.data).toEqual({ deep: null, known: null, fine: 1 });
    expect(answer.errors.map((e) => [e.path[0], e.message])).toEqual([['deep', 'Unexpected error.'], ['known', 'Data source not found']]);
    const masked = lines.filter((l) => l.msg === 'GraphQL error masked');
    expect(masked).toHaveLength(1);
    expect(masked[0]).toMatchObject({ requestId: 'req-42', path: 'deep', err: { message: 'Maximum call stack size exceeded' } });
  });
});
