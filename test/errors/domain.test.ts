import { describe, expect, it } from '@jest/globals';
import { accessDenied, AUTH_ERRORS, busy, CallerRefusal, DomainError, STATUS, uniqueViolation } from '../../src/errors/domain.ts';

describe('DomainError', () => {
  it('carries the status of its code, and a whole wire body and headers when given', () => {
    const error = busy('no room now', 2);
    expect([error.code, error.status, error.message, error.body, error.headers]).toEqual(['UNAVAILABLE', 503, 'no room now', undefined, { 'retry-after': '2' }]);
    expect(Object.entries(STATUS).map(([code, status]) => new DomainError(code as never, 'x').status)).toEqual(Object.values(STATUS));
  });

  it('words the access-control 403 as the original, with an id of its own each time', () => {
    const [a, b] = [accessDenied('datasources:write'), accessDenied('datasources:write')];
    expect(a).toBeInstanceOf(CallerRefusal);
    expect([a.status, a.body!.title, a.body!.message]).toEqual([403, 'Access denied', a.message]);
    expect(a.message).toContain('datasources:write');
    expect(a.body!.accessErrorId).toMatch(/^ACE\d{10}$/);
    expect(b.body!.accessErrorId).toMatch(/^ACE\d{10}$/);
  });

  it('answers a blocked login exactly as a wrong password, so it reveals no login', () => {
    expect(AUTH_ERRORS.blocked().body).toEqual(AUTH_ERRORS.badPassword().body);
    expect(AUTH_ERRORS.invalidKey().body).toMatchObject({ messageId: 'api-key.invalid', statusCode: 401, traceID: '' });
  });

  it('tells a unique violation by its code, naming the constraint', () => {
    expect([
      uniqueViolation({ code: '23505', constraint: 'org_name_key' }), uniqueViolation({ code: '23505' }),
      uniqueViolation({ code: '23503', constraint: 'x' }), uniqueViolation(null), uniqueViolation(new Error('x')),
    ]).toEqual(['org_name_key', '', null, null, null]);
  });
});
