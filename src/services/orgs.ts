import type { EntityManager } from '@mikro-orm/postgresql';
import { Org } from '../db/entities/index.ts';

export const MAIN_ORG_NAME = 'Main Org.';

/** The default org (id 1, as the original server's auto-assign expects), created on first start. */
export async function ensureMainOrg(em: EntityManager): Promise<number> {
  await em.execute(`insert into org (id, name) values (1, ?) on conflict do nothing`, [MAIN_ORG_NAME]);
  // Keep the id sequence past the explicit id so later orgs do not collide with it.
  await em.execute(`select setval(pg_get_serial_sequence('org', 'id'), greatest((select max(id) from org), 1))`);
  return 1;
}

export async function orgExists(em: EntityManager, id: number): Promise<boolean> {
  return (await em.count(Org, { id })) > 0;
}
