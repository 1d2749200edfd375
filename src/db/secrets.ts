import { createCipheriv, createDecipheriv, hkdfSync, randomBytes } from 'node:crypto';

const IV_BYTES = 12;
const TAG_BYTES = 16;

/**
 * AES-256-GCM for secrets at rest. The key is derived from `[security] secret_key` with HKDF so the
 * configured string (any length) never serves as a key directly. Output: base64(iv | tag | ciphertext).
 *
 * Every secret is sealed with associated data naming where it belongs (see
 * `dataSourceSecretBinding`): the tag covers it, so a blob copied to another row or key fails to
 * open instead of handing its plaintext to another owner. Empty associated data is what blobs
 * sealed before the binding carry; only the migration that re-seals them uses it.
 */
export class SecretBox {
  readonly #key: Buffer;

  constructor(secretKey: string) {
    this.#key = Buffer.from(hkdfSync('sha256', secretKey, 'dashgate', 'data source secrets v1', 32));
  }

  encrypt(plaintext: string, associatedData: string): string {
    const iv = randomBytes(IV_BYTES);
    const cipher = createCipheriv('aes-256-gcm', this.#key, iv);
    cipher.setAAD(Buffer.from(associatedData, 'utf8'));
    const body = Buffer.concat([cipher.update(plaintext, 'utf8'), cipher.final()]);
    return Buffer.concat([iv, cipher.getAuthTag(), body]).toString('base64');
  }

  /** Throws when the blob was sealed with another key or other associated data, or was altered. */
  decrypt(sealed: string, associatedData: string): string {
    const raw = Buffer.from(sealed, 'base64');
    if (raw.length < IV_BYTES + TAG_BYTES) throw new Error('sealed secret too short');
    const decipher = createDecipheriv('aes-256-gcm', this.#key, raw.subarray(0, IV_BYTES));
    decipher.setAuthTag(raw.subarray(IV_BYTES, IV_BYTES + TAG_BYTES));
    decipher.setAAD(Buffer.from(associatedData, 'utf8'));
    return Buffer.concat([decipher.update(raw.subarray(IV_BYTES + TAG_BYTES)), decipher.final()]).toString('utf8');
  }
}

/**
 * The associated data of secret `key` of data source `uid` in org `orgId`. The uid is unique only
 * within an org, hence both; NUL cannot occur in a uid and ends the fixed parts unambiguously.
 */
export function dataSourceSecretBinding(orgId: number, uid: string, key: string): string {
  return `dashgate data source secret\0${orgId}\0${uid}\0${key}`;
}
