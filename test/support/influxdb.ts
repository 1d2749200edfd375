import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { freePort } from './main-process.ts';
import { missing, run, stop, until } from './real-upstreams.ts';

export const INFLUXD = '/usr/bin/influxd';

export interface InfluxDb {
  url: string;
  /** Runs an InfluxQL statement (CREATE DATABASE ...). */
  query(q: string): Promise<unknown>;
  /** Writes line protocol with millisecond timestamps. */
  write(db: string, lines: string): Promise<void>;
  close(): Promise<void>;
}

/**
 * Debian's InfluxDB 1.x on free loopback ports (HTTP and the RPC service both bound to
 * 127.0.0.1), data in a temp dir, no reporting; undefined when it is not installed.
 */
export async function startInfluxDb(): Promise<InfluxDb | undefined> {
  if (missing([INFLUXD], 'InfluxDB')) return undefined;
  const dir = mkdtempSync(join(tmpdir(), 'dashgate-influx-'));
  const [http, rpc] = [await freePort(), await freePort()];
  writeFileSync(join(dir, 'influxdb.conf'), [
    'reporting-enabled = false',
    `bind-address = "127.0.0.1:${rpc}"`,
    '[meta]', `  dir = "${dir}/meta"`,
    '[data]', `  dir = "${dir}/data"`, `  wal-dir = "${dir}/wal"`, '  query-log-enabled = false',
    '[monitor]', '  store-enabled = false',
    '[http]', '  enabled = true', `  bind-address = "127.0.0.1:${http}"`, '  log-enabled = false',
    '[logging]', '  level = "warn"',
    '',
  ].join('\n'));
  const proc = run(INFLUXD, ['-config', join(dir, 'influxdb.conf')]);
  const url = `http://127.0.0.1:${http}`;
  const close = async () => {
    await stop(proc.child);
    rmSync(dir, { recursive: true, force: true });
  };
  try {
    await until(async () => (await fetch(`${url}/ping`)).status === 204, `influxd (${proc.output()})`);
  } catch (error) {
    await close();
    throw error;
  }
  return {
    url,
    async query(q) {
      const res = await fetch(`${url}/query`, { method: 'POST', body: new URLSearchParams({ q }) });
      return res.json();
    },
    async write(db, lines) {
      const res = await fetch(`${url}/write?db=${encodeURIComponent(db)}&precision=ms`, { method: 'POST', body: lines });
      if (res.status !== 204) throw new Error(`write failed: ${res.status} ${await res.text()}`);
    },
    close,
  };
}
