import type { EntityManager } from '@mikro-orm/postgresql';
import { Org, OrgUser, User } from '../db/entities/index.ts';
import type { BasicRole } from '../roles.ts';
import { hashPassword, MIN_PASSWORD_LENGTH } from '../auth/passwords.ts';
import { badRequest, conflict, notFound, preconditionFailed, uniqueViolation } from '../errors/domain.ts';
import { MESSAGES } from '../errors/messages.ts';
import { ensureMainOrg, orgExists } from './orgs.ts';
import { escapeLike } from './paging.ts';
import { guardServerAdmins } from './server-admins.ts';

export type UserRow = InstanceType<typeof User.class>;

/**
 * Creates the configured admin on first start (a server admin and Admin of the main org). An existing
 * user of that login is left alone, so a changed password survives restarts. `passwordHash`:
 * `password` hashed ahead, if it was.
 */
export async function ensureAdminUser(em: EntityManager, options: { login: string; email: string; password: string; passwordHash?: Promise<string>; orgId: number }): Promise<void> {
  const existing = await em.count(User, { login: { $ilike: escapeLike(options.login) } });
  if (existing) return;
  const passwordHash = await (options.passwordHash ?? hashPassword(options.password));
  await em.transactional(async (tx) => {
    const rows = await tx.execute<{ id: number }[]>(
      `insert into "user" (login, email, name, password_hash, is_admin, org_id)
       values (?, ?, ?, ?, true, ?) on conflict do nothing returning id`,
      [options.login, options.email || options.login, options.login, passwordHash, options.orgId],
    );
    if (rows[0]) await tx.execute(`insert into org_user (org_id, user_id, role) values (?, ?, 'Admin')`, [options.orgId, rows[0].id]);
  });
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
  autoAssignOrgRole: BasicRole;
}

/** Column sizes of the schema: longer values are refused with a 400 instead of failing in PostgreSQL. */
export const MAX_LOGIN_LENGTH = 190;
export const MAX_NAME_LENGTH = 255;

/**
 * Refuses text PostgreSQL cannot store as given: longer than its column, or holding a NUL byte
 * (which `text`/`varchar` reject outright). `field` names the value in the message.
 */
export function assertStorableText(value: string, field: string, maxLength: number): void {
  if (value.includes('\0')) throw badRequest(MESSAGES.user.nul(field));
  if (value.length > maxLength) throw badRequest(MESSAGES.user.tooLong(field, maxLength));
}

/**
 * A global user, as the admin API creates them: login defaults to the e-mail, and the user joins
 * the given org or the auto-assign org with the auto-assign role (without auto-assign, a new org
 * named after the user, as its Admin). Duplicates (login or e-mail, either way round, any case)
 * are 412, also when two creations race: the unique indexes on lower(login)/lower(email) decide.
 */
export async function createUser(em: EntityManager, input: CreateUserInput, defaults: UserDefaults): Promise<UserRow> {
  const password = input.password ?? '';
  // The original binds the password as a required field: absent or empty is malformed input.
  if (password === '') throw badRequest(MESSAGES.http.badRequest);
  const email = (input.email ?? '').trim();
  const formLogin = (input.login ?? '').trim();
  const login = formLogin || email;
  if (!login) throw badRequest(MESSAGES.user.needLogin);
  if (password.length < MIN_PASSWORD_LENGTH) throw badRequest(MESSAGES.user.passwordTooShort);
  const finalEmail = email || login;
  const name = input.name ?? '';
  assertStorableText(login, 'login', MAX_LOGIN_LENGTH);
  assertStorableText(finalEmail, 'email', MAX_LOGIN_LENGTH);
  assertStorableText(name, 'name', MAX_NAME_LENGTH);
  // The message quotes the form as sent (trimmed), not the defaulted login.
  const duplicate = () => preconditionFailed(MESSAGES.user.exists(email, formLogin));
  const clashes = async (db: EntityManager) =>
    (await db.execute(
      `select 1 from "user" where lower(login) in (lower(?), lower(?)) or lower(email) in (lower(?), lower(?)) limit 1`,
      [login, finalEmail, login, finalEmail],
    )).length > 0;
  // Hashed before the transaction: argon2 takes tens of milliseconds and must not hold a connection.
  const passwordHash = await hashPassword(password);

  try {
    return await em.transactional(async (tx) => {
      if (await clashes(tx)) throw duplicate();
      let orgId: number;
      let role: BasicRole;
      if (defaults.autoAssignOrg) {
        orgId = input.orgId || defaults.autoAssignOrgId;
        role = defaults.autoAssignOrgRole;
        if (!(await orgExists(tx, orgId))) {
          if (input.orgId || orgId !== 1) throw badRequest(MESSAGES.user.orgNotFound);
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
        name,
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
    if (constraint === 'user_login_lower_unique' || constraint === 'user_email_lower_unique') throw duplicate();
    // Without auto-assign the user's own org is created first, so a racing twin fails on the org's
    // name; tell the two cases apart by whether the twin user now exists.
    if (constraint === 'org_name_key') throw (await clashes(em)) ? duplicate() : conflict(MESSAGES.user.orgNameTaken);
    throw error;
  }
}

async function findUser(em: EntityManager, id: number): Promise<UserRow> {
  const user = await em.findOne(User, { id, isServiceAccount: false });
  if (!user) throw notFound(MESSAGES.user.notFound);
  return user;
}

/**
 * Sets a new password. Its hash changes, so every instance's cached proof of the old one stops
 * matching on the next request; the user's failed-login history is cleared with it.
 */
export async function updatePassword(em: EntityManager, id: number, password: string): Promise<void> {
  if (password === '') throw badRequest(MESSAGES.http.badRequest);
  if (password.length < MIN_PASSWORD_LENGTH) throw badRequest(MESSAGES.user.newPasswordTooShort);
  const user = await findUser(em, id);
  const passwordHash = await hashPassword(password);
  await em.transactional(async (tx) => {
    const updated = await tx.nativeUpdate(User, { id, isServiceAccount: false }, { passwordHash, updated: new Date() });
    if (!updated) throw notFound(MESSAGES.user.notFound);
    // A reset unblocks a user locked out by failed attempts, from every address (they are counted by lower-cased login).
    await tx.execute('delete from login_attempt where username = lower(?)', [user.login]);
  });
}

/**
 * Grants or revokes the server-admin permission; revoking the last enabled server admin's is
 * undone (400), also when several demotions and deletions race (see guardServerAdmins).
 */
export async function updatePermissions(em: EntityManager, id: number, isAdmin: boolean): Promise<void> {
  await guardServerAdmins(em, async (tx) => {
    const updated = await tx.nativeUpdate(User, { id, isServiceAccount: false }, { isAdmin, updated: new Date() });
    if (!updated) throw notFound(MESSAGES.user.notFound);
  });
}

/**
 * Deletes a user; memberships, stars and its tokens go with it (foreign keys cascade). The last
 * enabled server admin cannot be deleted, by itself or by another admin, however the calls race.
 */
export async function deleteUser(em: EntityManager, id: number): Promise<void> {
  await guardServerAdmins(em, async (tx) => {
    const deleted = await tx.nativeDelete(User, { id, isServiceAccount: false });
    if (!deleted) throw notFound(MESSAGES.user.notFound);
  });
}

/** Disables (or enables) a user: a disabled user's credentials are refused (401) on every instance from the next request on. */
export async function setUserDisabled(em: EntityManager, id: number, isDisabled: boolean): Promise<void> {
  await guardServerAdmins(em, async (tx) => {
    const updated = await tx.nativeUpdate(User, { id, isServiceAccount: false }, { isDisabled, updated: new Date() });
    if (!updated) throw notFound(MESSAGES.user.notFound);
  });
}
