import argon2 from 'argon2';

/**
 * argon2id with explicit parameters (RFC 9106's memory-constrained choice, about 20-40 ms per
 * verify here). Verified credentials are cached by the authenticator, so this cost is paid once.
 */
const OPTIONS = { type: argon2.argon2id, memoryCost: 19_456, timeCost: 2, parallelism: 1 } as const;

/**
 * argon2 runs on libuv's thread pool (4 threads by default), which DNS lookups and file I/O share.
 * Bounding concurrent hashes keeps a burst of logins from starving everything else.
 */
export const MAX_CONCURRENT_HASHES = 2;
let running = 0;
const waiting: Array<() => void> = [];

/**
 * Counters for tests and diagnostics: password verifications started, and the most argon2
 * computations ever in flight at once. `peakConcurrent` is measured around the computation itself,
 * not from the semaphore's own bookkeeping, so a broken bound shows up in it.
 */
export const hashingStats = { verifies: 0, peakConcurrent: 0 };
let inFlight = 0;

async function bounded<T>(work: () => Promise<T>): Promise<T> {
  // A finishing task hands its slot straight to the next waiter, so `running` never overshoots.
  if (running >= MAX_CONCURRENT_HASHES) await new Promise<void>((resolve) => waiting.push(resolve));
  else running++;
  inFlight++;
  hashingStats.peakConcurrent = Math.max(hashingStats.peakConcurrent, inFlight);
  try {
    return await work();
  } finally {
    inFlight--;
    const next = waiting.shift();
    if (next) next();
    else running--;
  }
}

export function hashPassword(password: string): Promise<string> {
  return bounded(() => argon2.hash(password, OPTIONS));
}

export function verifyPassword(hash: string, password: string): Promise<boolean> {
  hashingStats.verifies++;
  return bounded(() => argon2.verify(hash, password).catch(() => false));
}

/** A hash of a random string, verified against when the login is unknown so both cases cost the same. */
let decoy: Promise<string> | null = null;
export function decoyHash(): Promise<string> {
  decoy ??= argon2.hash(`decoy-${Math.random()}`, OPTIONS);
  return decoy;
}

export const MIN_PASSWORD_LENGTH = 4;
