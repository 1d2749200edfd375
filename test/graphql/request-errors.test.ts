import { describe, expect, it } from '@jest/globals';
import { GraphQLError } from 'graphql';
import { markRequestErrors } from '../../src/graphql/request-errors.ts';

describe('markRequestErrors', () => {
  const coercion = new GraphQLError('Variable "$id" got invalid value "abc"; Int cannot represent non-integer value: "abc"');
  it.each<[string, Parameters<typeof markRequestErrors>[0], unknown]>([
    ['a coercion error: code, variable, 400', { errors: [coercion] }, { code: 'BAD_USER_INPUT', variable: 'id', http: { status: 400 } }],
    ['a result with data is no request error', { data: null, errors: [coercion] }, undefined],
    ['a resolver error (it has a path) is left alone', { errors: [new GraphQLError('Variable "$x" is mentioned', { path: ['f'] })] }, undefined],
    ['an error that has a code keeps it', { errors: [new GraphQLError('Variable "$x" refused', { extensions: { code: 'TOO_MANY_REQUESTS' } })] }, { code: 'TOO_MANY_REQUESTS' }],
    ['other errors are left alone', { errors: [new GraphQLError('Too many open subscriptions')] }, undefined],
  ])('%s', (_name, result, extensions) => {
    const marked = markRequestErrors(result);
    expect(Object.keys(marked.errors![0]!.extensions).length ? marked.errors![0]!.extensions : undefined).toEqual(extensions);
  });

  it('shortens a message quoting a huge value', () => {
    const huge = new GraphQLError(`Variable "$id" got invalid value "${'x'.repeat(10_000)}"; Int cannot represent non-integer value`);
    const [error] = markRequestErrors({ errors: [huge] }).errors!;
    expect(error!.message).toHaveLength(501);
    expect(error!.extensions.variable).toBe('id');
  });
});
