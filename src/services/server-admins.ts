import type { EntityManager } from '@mikro-orm/postgresql';
import { badRequest } from '../errors/domain.ts';
import { MESSAGES } from '../errors/messages.ts';

/** Arbitrary constant naming the lock that changes to server admins take (see the migration lock in db/orm.ts). */
const SERVER_ADMINS_LOCK = 0x61646d6e; // "admn"

async function enabledServerAdmins(em: EntityManager): Promise<number> {
  const [row] = await em.execute<Array<{ n: string }>>(
    'select count(*) as n from "user" where is_admin and not is_disabled and not is_service_account',
  );
  return Number(row!.n);
}

/**
 * Runs `change` in a transaction holding the server-admin lock and undoes it (400) when it leaves
 * no enabled server admin where there was one, so the server can always be administered. Every
 * change that can demote, disable or delete a user goes through here: the transaction-scoped
 * advisory lock makes them run one after another across all instances, and under READ COMMITTED
 * each statement after the lock sees everything the previous holder committed, so two concurrent
 * deletions of the last two admins cannot both count the other one as remaining.
 */
export async function guardServerAdmins<T>(em: EntityManager, change: (tx: EntityManager) => Promise<T>): Promise<T> {
  return em.transactional(async (tx) => {
    await tx.execute('select pg_advisory_xact_lock(?)', [SERVER_ADMINS_LOCK]);
    const before = await enabledServerAdmins(tx);
    const result = await change(tx);
    if (before > 0 && (await enabledServerAdmins(tx)) === 0) throw badRequest(MESSAGES.user.lastAdmin);
    return result;
  });
}
