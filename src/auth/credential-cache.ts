import { createHmac, randomBytes } from 'node:crypto';

/**
 * Remembers (user, stored hash, presented password) triples that argon2 already accepted. The
 * stored hash is part of the key and is read fresh from PostgreSQL on every request, so a password
 * change or user deletion on any instance invalidates the proof at once, with no messaging. Keys
 * are HMACs under a per-process random key: nothing cached can be brute-forced offline.
 */
export class VerifiedCredentialCache {
  readonly #key = randomBytes(32);
  readonly #entries = new Map<string, true>();
  readonly #capacity: number;

  constructor(capacity = 10_000) {
    this.#capacity = capacity;
  }

  #keyOf(userId: number, storedHash: string, password: string): string {
    return createHmac('sha256', this.#key).update(`${userId}\0${storedHash}\0${password}`).digest('base64');
  }

  has(userId: number, storedHash: string, password: string): boolean {
    const key = this.#keyOf(userId, storedHash, password);
    if (!this.#entries.has(key)) return false;
    // Refresh recency (Map keeps insertion order, so the first key is the least recently used).
    this.#entries.delete(key);
    this.#entries.set(key, true);
    return true;
  }

  add(userId: number, storedHash: string, password: string): void {
    const key = this.#keyOf(userId, storedHash, password);
    this.#entries.set(key, true);
    if (this.#entries.size > this.#capacity) this.#entries.delete(this.#entries.keys().next().value!);
  }
}
