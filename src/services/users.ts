import type { EntityManager } from '@mikro-orm/postgresql';
import { Org, OrgUser, User, type OrgRole } from '../db/entities/index.ts';
import { hashPassword, MIN_PASSWORD_LENGTH } from '../auth/passwords.ts';
import { badRequest, DomainError, notFound, uniqueViolation } from './errors.ts';
import { ensureMainOrg } from './orgs.ts';

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

export interface CreateUserInput {
  name?: string | null;
  email?: string | null;
  login?: string | null;
  password?: string | null;
  orgId?: number | null;
}

export interface UserDefaults {
  autoAssignOrg: boolean;
  autoAssignOrgId: number;
  autoAssignOrgRole: OrgRole;
}

export const USER_MESSAGES = {
  needLogin: 'Validation error, need specify either username or email',
  passwordTooShort: 'Password is missing or too short',
  newPasswordTooShort: 'New password too short',
  notFound: 'user not found',
  orgNotFound: 'organization not found',
  lastAdmin: 'cannot remove last grafana admin',
} as const;

/**
 * A global user, as the admin API creates them: login defaults to the e-mail, and the user joins
 * the given org or the auto-assign org with the auto-assign role (without auto-assign, a new org
 * named after the user, as its Admin). Duplicates (login or e-mail, either way round, any case) are 412.
 */
export async function createUser(em: EntityManager, input: CreateUserInput, defaults: UserDefaults): Promise<UserRow> {
  const email = (input.email ?? '').trim();
  let login = (input.login ?? '').trim();
  if (!login) login = email;
  if (!login) throw badRequest(USER_MESSAGES.needLogin);
  const password = input.password ?? '';
  if (password.length < MIN_PASSWORD_LENGTH) throw badRequest(USER_MESSAGES.passwordTooShort);
  const finalEmail = email || login;
  const duplicate = () =>
    new DomainError('PRECONDITION_FAILED', `User with email '${input.email ?? ''}' or username '${input.login ?? ''}' already exists`);
  const passwordHash = await hashPassword(password);

  try {
    return await em.transactional(async (tx) => {
      const clash = await tx.execute(
        `select 1 from "user" where lower(login) in (lower(?), lower(?)) or lower(email) in (lower(?), lower(?)) limit 1`,
        [login, finalEmail, login, finalEmail],
      );
      if (clash.length) throw duplicate();
      let orgId: number;
      let role: OrgRole;
      if (defaults.autoAssignOrg) {
        orgId = input.orgId || defaults.autoAssignOrgId;
        role = defaults.autoAssignOrgRole;
        if (!(await tx.count(Org, { id: orgId }))) {
          if (input.orgId || orgId !== 1) throw badRequest(USER_MESSAGES.orgNotFound);
          orgId = await ensureMainOrg(tx);
        }
      } else {
        const org = tx.create(Org, { name: finalEmail });
        await tx.flush();
        orgId = org.id;
        role = 'Admin';
      }
      const user = tx.create(User, {
        login,
        email: finalEmail,
        name: input.name ?? '',
        passwordHash,
        isAdmin: false,
        isDisabled: false,
        isServiceAccount: false,
        orgId,
        // Never seen: keeps the new user out of "active" counts.
        lastSeenAt: new Date(Date.now() - 10 * 365 * 24 * 3600 * 1000),
      });
      await tx.flush();
      tx.create(OrgUser, { orgId, userId: user.id, role });
      await tx.flush();
      return user;
    });
  } catch (error) {
    const constraint = uniqueViolation(error);
    if (constraint !== null && constraint.startsWith('user_')) throw duplicate();
    if (constraint === 'org_name_key') throw duplicate();
    throw error;
  }
}

async function findUser(em: EntityManager, id: number): Promise<UserRow> {
  const user = await em.findOne(User, { id, isServiceAccount: false });
  if (!user) throw notFound(USER_MESSAGES.notFound);
  return user;
}

/** Sets a new password; its hash changes, so every instance's cached proof of the old one stops matching. */
export async function updatePassword(em: EntityManager, id: number, password: string): Promise<void> {
  if (password.length < MIN_PASSWORD_LENGTH) throw badRequest(USER_MESSAGES.newPasswordTooShort);
  const user = await findUser(em, id);
  user.passwordHash = await hashPassword(password);
  await em.flush();
  // A reset unblocks a user locked out by failed attempts.
  await em.execute('delete from login_attempt where username = lower(?)', [user.login]);
}

/**
 * Grants or revokes the server-admin permission. The admin rows are locked first, so concurrent
 * demotions serialise and the last admin can never be removed.
 */
export async function updatePermissions(em: EntityManager, id: number, isAdmin: boolean): Promise<void> {
  await em.transactional(async (tx) => {
    const admins = await tx.execute<{ id: number }[]>('select id from "user" where is_admin and not is_service_account order by id for update');
    const user = await tx.findOne(User, { id, isServiceAccount: false });
    if (!user) throw notFound(USER_MESSAGES.notFound);
    if (!isAdmin && user.isAdmin && admins.length <= 1) throw badRequest(USER_MESSAGES.lastAdmin);
    user.isAdmin = isAdmin;
    await tx.flush();
  });
}

/** Deletes a user; memberships, stars and its tokens go with it (foreign keys cascade). */
export async function deleteUser(em: EntityManager, id: number): Promise<void> {
  const deleted = await em.nativeDelete(User, { id, isServiceAccount: false });
  if (!deleted) throw notFound(USER_MESSAGES.notFound);
}
