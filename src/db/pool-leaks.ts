import type pg from 'pg';

/** Long enough for any holder that still releases a dead connection to have done so. */
const GRACE_MS = 1_000;

/**
 * Hands back to the pool the connections that kysely (under MikroORM) never releases: when BEGIN,
 * COMMIT or ROLLBACK fails, its transaction keeps the connection checked out for good
 * (kysely-org/kysely#1990). That is exactly what happens to every transaction in flight when
 * PostgreSQL restarts or is killed: each one cost a pool slot for the life of the process, and
 * closing the pool then waited forever for them.
 *
 * A connection that ended while checked out, and is still checked out a moment later, is
 * released with an error, which makes the pool drop it. Nothing can use it any more: every query
 * on it fails at once. A later release by its holder, should one come, does nothing.
 */
export function releaseConnectionsLostInUse(pool: pg.Pool): void {
  const checkedOut = new Set<pg.PoolClient>();
  pool.on('acquire', (client) => checkedOut.add(client));
  pool.on('release', (_error, client) => checkedOut.delete(client));
  pool.on('remove', (client) => checkedOut.delete(client as pg.PoolClient));
  pool.on('connect', (client) => {
    client.once('end', () => {
      setTimeout(() => {
        const held = client as pg.PoolClient;
        if (!checkedOut.has(held)) return;
        checkedOut.delete(held);
        const release = held.release;
        held.release = () => {};
        release.call(held, new Error('connection lost while checked out'));
      }, GRACE_MS).unref();
    });
  });
}
