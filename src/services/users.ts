import type { EntityManager } from '@mikro-orm/postgresql';
import { OrgUser, User, type OrgRole } from '../db/entities/index.ts';
import { hashPassword } from '../auth/passwords.ts';

export type UserRow = InstanceType<typeof User.class>;

/**
 * Creates the configured admin on first start (a server admin and Admin of the main org). An existing
 * user of that login is left alone, so a changed password survives restarts.
 */
export async function ensureAdminUser(em: EntityManager, options: { login: string; email: string; password: string; orgId: number }): Promise<void> {
  const existing = await em.count(User, { login: { $ilike: escapeLike(options.login) } });
  if (existing) return;
  const passwordHash = await hashPassword(options.password);
  await em.transactional(async (tx) => {
    const rows = await tx.execute<{ id: number }[]>(
      `insert into "user" (login, email, name, password_hash, is_admin, org_id)
       values (?, ?, ?, ?, true, ?) on conflict do nothing returning id`,
      [options.login, options.email || options.login, options.login, passwordHash, options.orgId],
    );
    if (rows[0]) await tx.execute(`insert into org_user (org_id, user_id, role) values (?, ?, 'Admin')`, [options.orgId, rows[0].id]);
  });
}

export async function addOrgMember(em: EntityManager, orgId: number, userId: number, role: OrgRole): Promise<void> {
  em.create(OrgUser, { orgId, userId, role });
  await em.flush();
}

function escapeLike(text: string): string {
  return text.replace(/[\\%_]/g, '\\$&');
}
