import { createHash } from 'node:crypto';
import type { EntityManager } from '@mikro-orm/postgresql';
import { hashPassword, MIN_PASSWORD_LENGTH, verifyPassword } from '../auth/passwords.ts';
import { badRequest, conflict, DomainError, notFound, uniqueViolation } from '../errors/domain.ts';
import { MESSAGES } from '../errors/messages.ts';
import type { BasicRole } from '../roles.ts';
import { containsPattern, pageWindow, type Paging } from './paging.ts';
import { assertStorableText, MAX_LOGIN_LENGTH, MAX_NAME_LENGTH } from './users.ts';

/** A user as `GET /api/users/:id` and `GET /api/user` show it (the original's UserProfileDTO). */
export interface UserProfile {
  id: number;
  uid: string;
  email: string;
  name: string;
  login: string;
  theme: string;
  /** The org the user acts in by default; null when it belongs to no org. */
  orgId: number | null;
  isGrafanaAdmin: boolean;
  isDisabled: boolean;
  updatedAt: Date;
  createdAt: Date;
}

/** One user in a search (the original's UserSearchHitDTO). */
export interface UserSearchHit {
  id: number;
  uid: string;
  name: string;
  login: string;
  email: string;
  isAdmin: boolean;
  isDisabled: boolean;
  lastSeenAt: Date | null;
}

export interface UserSearchPage {
  totalCount: number;
  users: UserSearchHit[];
  page: number;
  perPage: number;
}

/** One org of a user, with the user's role there. */
export interface UserOrg {
  orgId: number;
  name: string;
  role: BasicRole;
}

export interface UpdateUserInput {
  name?: string | null;
  email?: string | null;
  login?: string | null;
  theme?: string | null;
}

/** The original's structured 400 (`errutil`) for a user left with neither login nor e-mail. */
const emptyLoginAndEmail = () => {
  const message = MESSAGES.user.emptyLoginAndEmail;
  return new DomainError('BAD_REQUEST', message, { message, messageId: 'user.empty-username-and-email', statusCode: 400, traceID: '' });
};

/** The original's structured 400 for a new password under the minimum length. */
const passwordTooShort = () => {
  const message = MESSAGES.user.newPasswordPolicyTooShort;
  return new DomainError('BAD_REQUEST', message, { message, messageId: 'password-policy-too-short', statusCode: 400, traceID: '' });
};

/** The avatar path the original derives from an e-mail (a Gravatar hash served under /avatar). */
export function avatarUrl(email: string, options: { disableGravatar: boolean; subPath: string }): string {
  if (options.disableGravatar) return `${options.subPath}/public/img/user_profile.png`;
  if (!email) return '';
  return `${options.subPath}/avatar/${createHash('md5').update(email.trim().toLowerCase()).digest('hex')}`;
}

/** How long ago `date` was, in the original's words ("10 years", "3 minutes", "< 1 minute"; "?" for never). */
export function ageOf(date: Date | null, now = Date.now()): string {
  if (!date) return '?';
  const minutes = (now - date.getTime()) / 60_000;
  const units: Array<[number, string]> = [[525_600, 'year'], [43_800, 'month'], [1_440, 'day'], [60, 'hour'], [1, 'minute']];
  for (const [size, unit] of units) {
    const amount = Math.floor(minutes / size);
    if (amount > 0) return `${amount} ${unit}${amount === 1 ? '' : 's'}`;
  }
  return '< 1 minute';
}

interface ProfileRow {
  id: number;
  uid: string;
  email: string;
  name: string;
  login: string;
  theme: string;
  org_id: number | null;
  is_admin: boolean;
  is_disabled: boolean;
  created: Date;
  updated: Date;
}

const PROFILE_COLUMNS = 'id, uid, email, name, login, theme, org_id, is_admin, is_disabled, created, updated';

function toProfile(row: ProfileRow): UserProfile {
  return {
    id: row.id,
    uid: row.uid,
    email: row.email,
    name: row.name,
    login: row.login,
    theme: row.theme,
    orgId: row.org_id,
    isGrafanaAdmin: row.is_admin,
    isDisabled: row.is_disabled,
    updatedAt: new Date(row.updated),
    createdAt: new Date(row.created),
  };
}

/** A user (never a service account) by id; 404 "user not found" otherwise. */
export async function getUserProfile(em: EntityManager, id: number): Promise<UserProfile> {
  const [row] = await em.execute<ProfileRow[]>(`select ${PROFILE_COLUMNS} from "user" where id = ? and not is_service_account`, [id]);
  if (!row) throw notFound(MESSAGES.user.notFound);
  return toProfile(row);
}

/** Users (never service accounts) by id, in one statement; unknown ids are left out. */
export async function getUserProfiles(em: EntityManager, ids: readonly number[]): Promise<UserProfile[]> {
  if (ids.length === 0) return [];
  const rows = await em.execute<ProfileRow[]>(
    `select ${PROFILE_COLUMNS} from "user" where id = any(string_to_array(?, ',')::int[]) and not is_service_account`,
    [ids.join(',')],
  );
  return rows.map(toProfile);
}

/** Every user (never a service account) whose login, e-mail or name contains `query`, by login then e-mail. */
export async function listUserProfiles(em: EntityManager, query: string): Promise<UserProfile[]> {
  if (query.includes('\0')) throw badRequest();
  const pattern = containsPattern(query);
  const rows = await em.execute<ProfileRow[]>(
    `select ${PROFILE_COLUMNS} from "user"
      where not is_service_account and (? = '' or login ilike ? or email ilike ? or name ilike ?)
      order by login, email`,
    [query, pattern, pattern, pattern],
  );
  return rows.map(toProfile);
}

/**
 * A user by login or, failing that, by e-mail, both compared case-insensitively as sign-in does;
 * 404 "user not found" when neither matches (or nothing was asked for).
 */
export async function lookupUserProfile(em: EntityManager, loginOrEmail: string | null | undefined): Promise<UserProfile> {
  const wanted = loginOrEmail ?? '';
  if (!wanted || wanted.includes('\0')) throw notFound(MESSAGES.user.notFound);
  const [row] = await em.execute<ProfileRow[]>(
    `select ${PROFILE_COLUMNS} from "user"
      where (lower(login) = lower(?) or lower(email) = lower(?)) and not is_service_account
      order by (lower(login) = lower(?)) desc limit 1`,
    [wanted, wanted, wanted],
  );
  if (!row) throw notFound(MESSAGES.user.notFound);
  return toProfile(row);
}

/**
 * Users (never service accounts) whose login, e-mail or name contains `query` (any case), by
 * login then e-mail, one page at a time (pages count from 1; a page past the end is empty).
 */
export async function searchUsers(em: EntityManager, paging: Paging): Promise<UserSearchPage> {
  const { page, perPage, offset } = pageWindow(paging, 1);
  const query = paging.query ?? '';
  if (query.includes('\0')) throw badRequest();
  const pattern = containsPattern(query);
  const where = `not is_service_account and (? = '' or login ilike ? or email ilike ? or name ilike ?)`;
  const params = [query, pattern, pattern, pattern];
  const rows = await em.execute<Array<{ id: number; uid: string; name: string; login: string; email: string; is_admin: boolean; is_disabled: boolean; last_seen_at: Date | null }>>(
    `select id, uid, name, login, email, is_admin, is_disabled, last_seen_at from "user" where ${where}
      order by login, email limit ? offset ?`,
    [...params, perPage, offset],
  );
  const [count] = await em.execute<Array<{ n: string }>>(`select count(*) as n from "user" where ${where}`, params);
  return {
    totalCount: Number(count!.n),
    users: rows.map((r) => ({
      id: r.id, uid: r.uid, name: r.name, login: r.login, email: r.email,
      isAdmin: r.is_admin, isDisabled: r.is_disabled, lastSeenAt: r.last_seen_at ? new Date(r.last_seen_at) : null,
    })),
    page,
    perPage,
  };
}

/** The orgs a user belongs to with its role in each, by name; empty for an unknown user. */
export async function userOrgs(em: EntityManager, userId: number): Promise<UserOrg[]> {
  const rows = await em.execute<Array<{ org_id: number; name: string; role: BasicRole }>>(
    `select o.id as org_id, o.name, ou.role
       from org_user ou join org o on o.id = ou.org_id join "user" u on u.id = ou.user_id
      where ou.user_id = ? and not u.is_service_account
      order by lower(o.name), o.name`,
    [userId],
  );
  return rows.map((r) => ({ orgId: r.org_id, name: r.name, role: r.role }));
}

/** `userOrgs` for several users in one statement; users in no org map to an empty list. */
export async function orgsOfUsers(em: EntityManager, userIds: readonly number[]): Promise<Map<number, UserOrg[]>> {
  const byUser = new Map<number, UserOrg[]>(userIds.map((id) => [id, []]));
  if (userIds.length === 0) return byUser;
  const rows = await em.execute<Array<{ user_id: number; org_id: number; name: string; role: BasicRole }>>(
    `select ou.user_id, o.id as org_id, o.name, ou.role
       from org_user ou join org o on o.id = ou.org_id join "user" u on u.id = ou.user_id
      where ou.user_id = any(string_to_array(?, ',')::int[]) and not u.is_service_account
      order by lower(o.name), o.name`,
    [userIds.join(',')],
  );
  for (const r of rows) byUser.get(r.user_id)?.push({ orgId: r.org_id, name: r.name, role: r.role });
  return byUser;
}

/**
 * Changes a user's name, e-mail, login and theme as the original does: the login defaults to the
 * e-mail, and a field sent empty keeps its stored value. A login or e-mail another user already
 * has (in any case, either way round) is 409, also when two updates race.
 */
export async function updateUser(em: EntityManager, id: number, input: UpdateUserInput): Promise<void> {
  const email = (input.email ?? '').trim();
  const login = (input.login ?? '').trim() || email;
  if (!login) throw emptyLoginAndEmail();
  const name = input.name ?? '';
  const theme = input.theme ?? '';
  assertStorableText(login, 'login', MAX_LOGIN_LENGTH);
  assertStorableText(email, 'email', MAX_LOGIN_LENGTH);
  assertStorableText(name, 'name', MAX_NAME_LENGTH);
  assertStorableText(theme, 'theme', MAX_NAME_LENGTH);
  const conflictError = () => conflict(MESSAGES.user.loginConflict);
  try {
    await em.transactional(async (tx) => {
      const [clash] = await tx.execute(
        `select 1 from "user" where id <> ? and (lower(login) in (lower(?), lower(?)) or lower(email) in (lower(?), lower(?))) limit 1`,
        [id, login, email || login, login, email || login],
      );
      if (clash) throw conflictError();
      const [updated] = await tx.execute<Array<{ id: number }>>(
        `update "user" set login = ?, email = coalesce(nullif(?, ''), email), name = coalesce(nullif(?, ''), name),
                theme = coalesce(nullif(?, ''), theme), updated = now()
          where id = ? and not is_service_account returning id`,
        [login, email, name, theme, id],
      );
      if (!updated) throw notFound(MESSAGES.user.notFound);
    });
  } catch (error) {
    if (uniqueViolation(error) === 'user_login_lower_unique' || uniqueViolation(error) === 'user_email_lower_unique') throw conflictError();
    throw error;
  }
}

/**
 * The signed-in user's own password change: the old password must match (401 otherwise). The
 * stored hash changes, so every instance stops accepting the old password on the next request.
 */
export async function changeOwnPassword(em: EntityManager, userId: number, oldPassword: string, newPassword: string): Promise<void> {
  const [row] = await em.execute<Array<{ password_hash: string | null }>>(
    'select password_hash from "user" where id = ? and not is_service_account',
    [userId],
  );
  if (!row) throw notFound(MESSAGES.user.notFound);
  if (!row.password_hash || !oldPassword || !(await verifyPassword(row.password_hash, oldPassword))) {
    throw new DomainError('UNAUTHENTICATED', MESSAGES.user.invalidOldPassword);
  }
  if (newPassword.length < MIN_PASSWORD_LENGTH) throw passwordTooShort();
  const passwordHash = await hashPassword(newPassword);
  // Only if nobody changed it meanwhile: the old password was checked against this hash.
  const [updated] = await em.execute<Array<{ id: number }>>(
    'update "user" set password_hash = ?, updated = now() where id = ? and password_hash = ? returning id',
    [passwordHash, userId, row.password_hash],
  );
  if (!updated) throw new DomainError('UNAUTHENTICATED', MESSAGES.user.invalidOldPassword);
}

/** Makes `orgId` the org a user acts in by default; it must be one of its orgs (401 otherwise). */
export async function setCurrentOrg(em: EntityManager, userId: number, orgId: number): Promise<void> {
  const [updated] = await em.execute<Array<{ id: number }>>(
    `update "user" set org_id = ?, updated = now()
      where id = ? and exists (select 1 from org_user ou where ou.user_id = ? and ou.org_id = ?) returning id`,
    [orgId, userId, userId, orgId],
  );
  if (!updated) throw new DomainError('UNAUTHENTICATED', MESSAGES.user.notValidOrg);
}
