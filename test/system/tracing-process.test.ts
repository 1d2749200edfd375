import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from '@jest/globals';
import type { PgConnection } from '../../src/db/embedded.ts';
import { createTestDatabase, dropTestDatabase } from '../support/database.ts';
import { freePort, listening, spawnMain, stopMain, type MainProcess } from '../support/main-process.ts';
import { startOtlpReceiver, type OtlpReceiver } from '../support/otlp-receiver.ts';
import { call } from '../support/server.ts';

// The server as `npm start` runs it, tracing turned on from the environment alone: the request's
// spans reach the receiver, the last ones when it stops on SIGTERM (before the batch delay).

let dir = '';
let db: PgConnection | null = null;
let receiver: OtlpReceiver | null = null;
let main: MainProcess | null = null;

afterAll(async () => {
  if (main && main.child.exitCode === null) main.child.kill('SIGKILL');
  await receiver?.close();
  if (db) await dropTestDatabase(db);
  if (dir) await rm(dir, { recursive: true, force: true });
});

describe('tracing in the server process', () => {
  it('turns on from GF_TRACING_OPENTELEMETRY_OTLP_ADDRESS and sends the last spans when stopped', async () => {
    dir = await mkdtemp(join(tmpdir(), 'dashgate-tracing-'));
    db = await createTestDatabase();
    receiver = await startOtlpReceiver();
    const port = await freePort();
    const config = join(dir, 'tracing.ini');
    await writeFile(config, [
      '[server]', 'http_addr = 127.0.0.1', `http_port = ${port}`, 'router_logging = true',
      '[database]', 'type = postgres', `host = ${db.host}:${db.port}`, `name = ${db.database}`, `user = ${db.user}`, `password = ${db.password}`,
      '[security]', 'secret_key = tracing-test-key-0123456789abcdef01', '',
    ].join('\n'));
    main = spawnMain({ config, env: { GF_TRACING_OPENTELEMETRY_OTLP_ADDRESS: receiver.address, GF_TRACING_OPENTELEMETRY_SERVICE_NAME: 'dashgate-process' } });
    await listening(main);
    const traceId = '8bf92f3577b34da6a3ce929d0e0e4736';
    const res = await call({ url: `http://127.0.0.1:${port}` }, 'GET', '/api/datasources', { headers: { traceparent: `00-${traceId}-00f067aa0ba902b7-01` } });
    expect(res.status).toBe(200);
    // Within the batch delay (5 s) nothing has been sent yet; stopping sends it.
    expect(receiver.spans).toEqual([]);
    expect(await stopMain(main)).toBe(0);
    const spans = receiver.spans.filter((s) => s.traceId === traceId);
    expect(spans.map((s) => s.name)).toEqual(expect.arrayContaining(['GET /api/datasources']));
    expect(spans.some((s) => s.attributes['db.system.name'] === 'postgresql')).toBe(true);
    expect(spans[0]!.resource['service.name']).toBe('dashgate-process');
    expect(main.logs().find((l) => l.msg === 'request' && l.route === '/api/datasources')).toMatchObject({ trace_id: traceId });
  });
});
