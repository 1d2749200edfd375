import { afterAll, beforeAll } from '@jest/globals';
import { startTestServer, type StartOptions, type TestServer } from './server.ts';

/**
 * Two servers on one database, as they run behind a load balancer: started before the file's
 * tests (then `ready` is called with them) and closed after them.
 */
export function twoInstances(ready: (first: TestServer, second: TestServer) => unknown, options: StartOptions = {}): void {
  let first: TestServer | undefined;
  let second: TestServer | undefined;
  beforeAll(async () => {
    first = await startTestServer(options);
    second = await startTestServer({ ...options, connection: first.connection });
    await ready(first, second);
  });
  afterAll(async () => {
    await second?.close();
    await first?.close();
  });
}

/** Polls `probe` until it returns `expected` or `ms` pass; returns what it last saw. */
export async function eventually<T>(probe: () => Promise<T>, expected: T, ms = 1000): Promise<T> {
  const deadline = Date.now() + ms;
  let seen = await probe();
  while (seen !== expected && Date.now() < deadline) {
    await new Promise((r) => setTimeout(r, 10));
    seen = await probe();
  }
  return seen;
}
