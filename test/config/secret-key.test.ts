import { describe, expect, it } from '@jest/globals';
import { checkSecretKey, isPublishedSecretKey, MIN_SECRET_KEY_LENGTH, publishedSecretKey, SECRET_KEY_MESSAGES, secretKeyWeakness } from '../../src/config/secret-key.ts';

const strong = 'f'.repeat(MIN_SECRET_KEY_LENGTH);

describe('the secret key', () => {
  it('knows the published default however it is spelt', () => {
    const published = publishedSecretKey();
    expect(published.length).toBeGreaterThan(0);
    for (const spelling of [published, published.toUpperCase(), ` ${published} `, published.split('').join(' ')]) expect(isPublishedSecretKey(spelling)).toBe(true);
    expect(isPublishedSecretKey(strong)).toBe(false);
  });

  it.each<[string, { problem: string; fix: string } | null]>([
    [strong, null],
    [`  ${strong}  `, null],
    ['f'.repeat(MIN_SECRET_KEY_LENGTH - 1), { problem: SECRET_KEY_MESSAGES.short(31), fix: SECRET_KEY_MESSAGES.fixShort }],
    [`  ${'f'.repeat(10)}  `, { problem: SECRET_KEY_MESSAGES.short(10), fix: SECRET_KEY_MESSAGES.fixShort }],
    ['', { problem: SECRET_KEY_MESSAGES.short(0), fix: SECRET_KEY_MESSAGES.fixShort }],
  ])('weakness of a key of %j', (key, weakness) => {
    expect(secretKeyWeakness(key)).toEqual(weakness);
  });

  it('stops a production start on a weak key and warns in development, saying the fix', () => {
    const published = publishedSecretKey();
    expect(checkSecretKey({ appMode: 'production', security: { secretKey: strong } } as never)).toBeNull();
    expect(checkSecretKey({ appMode: 'production', security: { secretKey: published } } as never)).toEqual({
      error: `${SECRET_KEY_MESSAGES.published}; refusing to start in app_mode = production: ${SECRET_KEY_MESSAGES.fix}`,
    });
    expect(checkSecretKey({ appMode: 'development', security: { secretKey: 'short' } } as never)).toEqual({
      warning: `${SECRET_KEY_MESSAGES.short(5)}; allowed only because app_mode = development: ${SECRET_KEY_MESSAGES.fixShort}`,
    });
  });
});
