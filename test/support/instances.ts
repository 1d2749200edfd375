import { afterAll, beforeAll } from '@jest/globals';
import { LISTENER_APPLICATION_NAME } from '../../src/db/change-listener.ts';
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

/** Connected change listeners (one per instance), by backend pid. */
export async function changeListeners(server: TestServer): Promise<number[]> {
  const rows = await server.sql<{ pid: number }>(
    `select pid from pg_stat_activity where application_name = $1 and datname = current_database() and state = 'idle'`,
    [LISTENER_APPLICATION_NAME],
  );
  return rows.map((r) => r.pid);
}

/** Ends every instance's listening connection, as a network fault would. */
export async function killChangeListeners(server: TestServer): Promise<void> {
  await server.sql('select pg_terminate_backend(pid) from pg_stat_activity where application_name = $1 and datname = current_database()', [LISTENER_APPLICATION_NAME]);
}

/** Waits until every server listens again on a new connection (their caches then fill again). */
export async function changeListenersBack(servers: TestServer[], before: number[]): Promise<boolean> {
  const fresh = async () => (await changeListeners(servers[0]!)).filter((pid) => !before.includes(pid)).length;
  const listening = () => servers.every((s) => s.app.services.authenticator.principals.active);
  return (await eventually(fresh, servers.length, 5000)) === servers.length && (await eventually(async () => listening(), true));
}
