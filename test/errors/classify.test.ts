import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import pg from 'pg';
import { renderError } from '../../src/errors/render.ts';

// What a client is told when reaching PostgreSQL fails, from the errors the driver really raises.

let dir: string;
let closedPort: number;

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'dashgate-classify-'));
  // A port that was just free: nothing listens there.
  const probe = createServer();
  closedPort = await new Promise<number>((resolve) => probe.listen(0, '127.0.0.1', () => resolve((probe.address() as { port: number }).port)));
  await new Promise((resolve) => probe.close(resolve));
});

afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

async function connectError(config: pg.ClientConfig): Promise<unknown> {
  const client = new pg.Client({ ...config, user: 'nobody', database: 'none', connectionTimeoutMillis: 2000 });
  client.on('error', () => {});
  try {
    await client.connect();
  } catch (error) {
    return error;
  }
  await client.end();
  throw new Error('connected where nothing listens');
}

describe('renderError for database failures', () => {
  it.each([
    // The embedded cluster restarting: its socket file is gone until the new server makes it.
    ['a Unix socket that is not there', () => connectError({ host: dir, port: 5432 })],
    ['a TCP port nothing listens on', () => connectError({ host: '127.0.0.1', port: closedPort })],
  ])('%s is 503 "database unavailable"', async (_case, fail) => {
    const rendered = renderError(await fail());
    expect(rendered.status).toBe(503);
    expect(rendered.unexpected).toBeUndefined();
  });

  it('a missing file that is no socket stays an internal error', async () => {
    const error = await readFile(join(dir, 'absent.yaml')).catch((e: unknown) => e);
    expect((error as NodeJS.ErrnoException).code).toBe('ENOENT');
    const rendered = renderError(error);
    expect(rendered).toMatchObject({ status: 500, body: { message: 'Internal Server Error' } });
    expect(rendered.unexpected).toBe(error);
  });
});
