import { connect } from 'node:net';
import { describe, expect, it } from '@jest/globals';
import pg from 'pg';
import { call, startTestServer } from '../../support/server.ts';
import { subscribe } from '../../support/sse.ts';

describe('closing the app with a read for subscribers under way', () => {
  it('waits for that read before the pool may close, so closing the pool cannot wait forever for its connection', async () => {
    const server = await startTestServer();
    const locker = new pg.Client(server.connection);
    await locker.connect();
    try {
      // Verified once: the subscription's own request reads nothing of "user" below.
      expect((await call(server, 'GET', '/api/user')).status).toBe(200);
      // The members feed reads "user" when its first stream opens: held up here for as long as the lock is.
      await locker.query('begin');
      await locker.query('lock table "user" in access exclusive mode');
      const stream = await subscribe(server, 'subscription { orgMembersChanged { kind } }');
      expect(stream.status).toBe(200);
      const blocked = async () => (await locker.query(`select count(*)::int as n from pg_locks where not granted and relation = '"user"'::regclass`)).rows[0].n as number;
      for (let tries = 0; tries < 100 && (await blocked()) === 0; tries++) await new Promise((resolve) => setTimeout(resolve, 20));
      expect(await blocked()).toBeGreaterThan(0);

      let closed = false;
      const closing = server.app.close().then(() => {
        closed = true;
      });
      // The HTTP side closes first: the subscription's stream ends and the server stops listening...
      await stream.ended;
      // A bare connection, so no pooled keep-alive one is reused (and kept busy) by the check.
      const { hostname, port } = new URL(server.url);
      const refused = () => new Promise<boolean>((resolve) => {
        const socket = connect({ host: hostname, port: Number(port) });
        socket.once('connect', () => {
          socket.destroy();
          resolve(false);
        });
        socket.once('error', (error: NodeJS.ErrnoException) => resolve(error.code === 'ECONNREFUSED'));
      });
      for (let tries = 0; tries < 500 && !(await refused()); tries++) await new Promise((resolve) => setTimeout(resolve, 20));
      expect(await refused()).toBe(true);
      // ...while the read it started still waits for the lock on its connection, and the app for the read.
      expect(await blocked()).toBe(1);
      expect(closed).toBe(false);
      await locker.query('commit');
      await closing;
      // The read done, the app is closed and nothing of it waits on the table any more.
      expect([closed, await blocked()]).toEqual([true, 0]);
      stream.close();
    } finally {
      await locker.end();
      await server.close();
    }
  });
});
