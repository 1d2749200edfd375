import { describe, expect, it } from '@jest/globals';
import { dataSourceSecretBinding, SecretBox } from '../../src/db/secrets.ts';

describe('SecretBox', () => {
  const box = new SecretBox('a configured secret_key');
  const binding = dataSourceSecretBinding(1, 'prom', 'basicAuthPassword');

  it('opens what it sealed, never the same blob twice, the plaintext nowhere in it', () => {
    const a = box.encrypt('s3cret-value', binding);
    const b = box.encrypt('s3cret-value', binding);
    expect(a).not.toBe(b);
    expect([box.decrypt(a, binding), box.decrypt(b, binding)]).toEqual(['s3cret-value', 's3cret-value']);
    expect(Buffer.from(a, 'base64').toString('latin1')).not.toContain('s3cret');
    // iv (12) + tag (16) + the ciphertext, as long as the plaintext.
    expect(Buffer.from(a, 'base64').length).toBe(12 + 16 + 's3cret-value'.length);
  });

  it('refuses a blob bound elsewhere: another key name, uid, org, or the empty binding', () => {
    const sealed = box.encrypt('x', binding);
    for (const other of [
      dataSourceSecretBinding(1, 'prom', 'password'), dataSourceSecretBinding(1, 'prom2', 'basicAuthPassword'),
      dataSourceSecretBinding(2, 'prom', 'basicAuthPassword'), '',
    ]) expect(() => box.decrypt(sealed, other)).toThrow();
  });

  it('refuses another key, an altered blob and one too short', () => {
    const sealed = box.encrypt('x', binding);
    expect(() => new SecretBox('another key').decrypt(sealed, binding)).toThrow();
    const raw = Buffer.from(sealed, 'base64');
    raw[raw.length - 1]! ^= 1;
    expect(() => box.decrypt(raw.toString('base64'), binding)).toThrow();
    expect(() => box.decrypt(Buffer.alloc(27).toString('base64'), binding)).toThrow('sealed secret too short');
  });

  it('binds org, uid and key unambiguously', () => {
    expect(dataSourceSecretBinding(1, 'ab', 'c')).not.toBe(dataSourceSecretBinding(1, 'a', 'bc'));
    expect(dataSourceSecretBinding(12, 'x', 'k')).not.toBe(dataSourceSecretBinding(1, '2x', 'k'));
    expect(dataSourceSecretBinding(3, 'u', 'password')).toBe('dashgate data source secret\u00003\u0000u\u0000password');
  });
});
