import { createHash, randomInt } from 'node:crypto';
import { crc32 } from 'node:zlib';

const ALPHABET = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';

function randomAlnum(length: number): string {
  let out = '';
  for (let i = 0; i < length; i++) out += ALPHABET[randomInt(ALPHABET.length)];
  return out;
}

/** What is stored for a token: a SHA-256 of its secret part (tokens carry 190 bits, so no KDF is needed). */
export function tokenHash(kind: 'sa' | 'key', secret: string): string {
  return createHash('sha256').update(`${kind}:${secret}`).digest('hex');
}

function checksum(text: string): string {
  const c = crc32(text);
  // The original server writes the CRC32's bytes little-endian.
  return Buffer.from([c & 0xff, (c >>> 8) & 0xff, (c >>> 16) & 0xff, (c >>> 24) & 0xff]).toString('hex');
}

/** A service account token: `glsa_<32 alnum>_<crc32>`. */
export function newServiceAccountToken(): { token: string; hash: string } {
  const secret = randomAlnum(32);
  const token = `glsa_${secret}_${checksum(`glsa_${secret}`)}`;
  return { token, hash: tokenHash('sa', secret) };
}

/** A legacy API key: base64 of `{"k": secret, "n": name, "id": orgId}`. */
export function newLegacyApiKey(name: string, orgId: number): { token: string; hash: string } {
  const secret = randomAlnum(32);
  const token = Buffer.from(JSON.stringify({ k: secret, n: name, id: orgId })).toString('base64');
  return { token, hash: tokenHash('key', secret) };
}

export type DecodedToken = { hash: string; orgId?: number; name?: string } | null;

/** Recognises either token form; null when it is neither (the caller answers "Invalid API key"). */
export function decodeToken(token: string): DecodedToken {
  if (token.startsWith('gl')) {
    const parts = token.split('_');
    if (parts.length !== 3 || !/^[0-9A-Za-z]{32}$/.test(parts[1]!)) return null;
    if (checksum(`${parts[0]}_${parts[1]}`) !== parts[2]) return null;
    return { hash: tokenHash('sa', parts[1]!) };
  }
  try {
    const decoded = JSON.parse(Buffer.from(token, 'base64').toString('utf8')) as { k?: unknown; n?: unknown; id?: unknown };
    if (typeof decoded.k !== 'string' || typeof decoded.n !== 'string' || typeof decoded.id !== 'number') return null;
    return { hash: tokenHash('key', decoded.k), orgId: decoded.id, name: decoded.n };
  } catch {
    return null;
  }
}
