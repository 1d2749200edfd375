import { describe, expect, it } from '@jest/globals';
import { decodeToken, newLegacyApiKey, newServiceAccountToken, tokenHash } from '../../src/auth/tokens.ts';

describe('service account tokens', () => {
  it('read glsa_<32 alphanumerics>_<crc32 little-endian>, and decode to the hash stored', () => {
    const { token, hash } = newServiceAccountToken();
    expect(token).toMatch(/^glsa_[0-9A-Za-z]{32}_[0-9a-f]{8}$/);
    expect(hash).toBe(tokenHash('sa', token.split('_')[1]!));
    expect(decodeToken(token)).toEqual({ hash });
  });

  it('are refused with a wrong checksum, secret or shape', () => {
    const { token } = newServiceAccountToken();
    const [prefix, secret, sum] = token.split('_') as [string, string, string];
    const flipped = sum.replace(/^./, (c) => (c === '0' ? '1' : '0'));
    expect(decodeToken(`${prefix}_${secret}_${flipped}`)).toBeNull();
    expect(decodeToken(`${prefix}_${secret.slice(1)}x_${sum}`)).toBeNull();
    expect(decodeToken(`${prefix}_${secret.slice(1)}_${sum}`)).toBeNull();
    expect(decodeToken(`${token}_more`)).toBeNull();
  });

  it('have a checksum the original computes: CRC32 of "glsa_<secret>", bytes little-endian', () => {
    // crc32("glsa_" + 32 "a") = 0x940aa4b1, written b1a40a94.
    const secret = 'a'.repeat(32);
    expect(decodeToken(`glsa_${secret}_b1a40a94`)).toEqual({ hash: tokenHash('sa', secret) });
    expect(decodeToken(`glsa_${secret}_940aa4b1`)).toBeNull();
  });
});

describe('legacy API keys', () => {
  it('are base64 of {k, n, id} and decode to their hash, org and name', () => {
    const { token, hash } = newLegacyApiKey('ci', 3);
    const decoded = JSON.parse(Buffer.from(token, 'base64').toString('utf8'));
    expect(Object.keys(decoded)).toEqual(['k', 'n', 'id']);
    expect(decoded).toMatchObject({ n: 'ci', id: 3 });
    expect(decodeToken(token)).toEqual({ hash, orgId: 3, name: 'ci' });
    expect(hash).toBe(tokenHash('key', decoded.k));
  });

  it.each([
    ['not base64 JSON', 'not a token'],
    ['a missing name', Buffer.from('{"k":"s","id":1}').toString('base64')],
    ['an id as a string', Buffer.from('{"k":"s","n":"x","id":"1"}').toString('base64')],
    ['JSON null', Buffer.from('null').toString('base64')],
  ])('are refused with %s', (_name, token) => {
    expect(decodeToken(token)).toBeNull();
  });

  it('hash differently by kind, so one kind\'s secret never matches the other\'s', () => {
    expect(tokenHash('sa', 'same')).not.toBe(tokenHash('key', 'same'));
    expect(tokenHash('sa', 'same')).toMatch(/^[0-9a-f]{64}$/);
  });
});
