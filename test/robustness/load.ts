/** Load and fault helpers shared by the fault tests and the stress suite. */
import pg from 'pg';
import type { PgConnection } from '../../src/db/embedded.ts';

/** Connections of other sessions on `connection`'s database, ended as an operator would. */
export async function terminateBackends(connection: PgConnection): Promise<number> {
  const client = new pg.Client(connection);
  client.on('error', () => {});
  await client.connect();
  try {
    const { rows } = await client.query<{ ok: boolean }>(
      'select pg_terminate_backend(pid) as ok from pg_stat_activity where datname = current_database() and pid <> pg_backend_pid()',
    );
    return rows.filter((r) => r.ok).length;
  } finally {
    await client.end();
  }
}

export interface Sample {
  /** When the answer came (performance.now()). */
  at: number;
  /** How long it took, in ms. */
  ms: number;
  status: number;
  body: string;
}

/** `workers` loops calling `request` until `stop()`; every answer is kept with its time. */
export function load(workers: number, request: () => Promise<{ status: number; text: string }>): { samples: Sample[]; stop(): Promise<void> } {
  const samples: Sample[] = [];
  let running = true;
  const loops = Array.from({ length: workers }, async () => {
    while (running) {
      const started = performance.now();
      try {
        const res = await request();
        samples.push({ at: performance.now(), ms: performance.now() - started, status: res.status, body: res.text });
      } catch (error) {
        samples.push({ at: performance.now(), ms: performance.now() - started, status: 0, body: String(error) });
      }
    }
  });
  return {
    samples,
    async stop() {
      running = false;
      await Promise.all(loops);
    },
  };
}

export const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
