import type { EntityManager } from '@mikro-orm/postgresql';
import { badRequest, DomainError, forbidden, notFound, uniqueViolation } from '../errors/domain.ts';
import { MESSAGES } from '../errors/messages.ts';
import { isBasicRole, roleAtLeast, type BasicRole, type HeldRole } from '../roles.ts';
import { containsPattern } from './paging.ts';

/** A member of an org as the original lists one (OrgUserDTO). Service accounts are not members here. */
export interface OrgMember {
  orgId: number;
  userId: number;
  uid: string;
  email: string;
  name: string;
  login: string;
  role: BasicRole;
  lastSeenAt: Date | null;
  created: Date;
  isDisabled: boolean;
}

/** Who is changing memberships: their role in the org concerned, and whether they are a server admin. */
export interface MemberActor {
  role: HeldRole;
  isServerAdmin: boolean;
}

/** Arbitrary constant naming, with an org id, the lock that changes to that org's admins take. */
const ORG_ADMINS_LOCK = 0x6f61; // "oa"

/**
 * The role asked for, which must be one the original knows (`None`, a member with no permission of
 * its own, included) and not above the actor's own.
 */
function grantableRole(role: string | null | undefined, actor: MemberActor): BasicRole {
  if (!role) throw badRequest();
  if (!isBasicRole(role)) throw badRequest(MESSAGES.orgUser.invalidRole);
  const wanted = role;
  if (!actor.isServerAdmin && !roleAtLeast(actor.role, wanted)) throw forbidden(MESSAGES.orgUser.roleTooHigh);
  return wanted;
}

/**
 * Runs `change` while holding the org's admin lock and undoes it (400 `message`) when it leaves the
 * org without an Admin. Concurrent demotions and removals in one org run one after another across
 * instances (transaction-scoped advisory lock), so the last Admin survives however they race. Any
 * Admin membership counts, a service account's too, as in the original.
 */
async function guardOrgAdmins<T>(em: EntityManager, orgId: number, message: string, change: (tx: EntityManager) => Promise<T>): Promise<T> {
  return em.transactional(async (tx) => {
    await tx.execute('select pg_advisory_xact_lock(?, ?)', [ORG_ADMINS_LOCK, orgId]);
    const result = await change(tx);
    const [admin] = await tx.execute(`select 1 from org_user where org_id = ? and role = 'Admin' limit 1`, [orgId]);
    if (!admin) throw badRequest(message);
    return result;
  });
}

async function assertOrgExists(em: EntityManager, orgId: number): Promise<void> {
  const [org] = await em.execute('select 1 from org where id = ?', [orgId]);
  if (!org) throw notFound(MESSAGES.org.notFound);
}

interface MemberRow {
  user_id: number; uid: string; email: string; name: string; login: string; role: BasicRole;
  last_seen_at: Date | null; created: Date; is_disabled: boolean;
}

const MEMBER_SELECT = `select u.id as user_id, u.uid, u.email, u.name, u.login, ou.role, u.last_seen_at, u.created, u.is_disabled
       from org_user ou join "user" u on u.id = ou.user_id`;

function toMember(orgId: number, r: MemberRow): OrgMember {
  return {
    orgId, userId: r.user_id, uid: r.uid, email: r.email, name: r.name, login: r.login, role: r.role,
    lastSeenAt: r.last_seen_at ? new Date(r.last_seen_at) : null, created: new Date(r.created), isDisabled: r.is_disabled,
  };
}

/**
 * An org's members (users only) by login then e-mail, optionally those whose login, e-mail or name
 * contains `query` (any case), at most `limit` when it is positive. Empty for an unknown org.
 */
export async function listOrgMembers(em: EntityManager, orgId: number, filter: { query?: string | null; limit?: number | null } = {}): Promise<OrgMember[]> {
  const query = filter.query ?? '';
  if (query.includes('\0')) throw badRequest();
  const pattern = containsPattern(query);
  const limit = filter.limit && filter.limit > 0 ? filter.limit : null;
  const rows = await em.execute<MemberRow[]>(
    `${MEMBER_SELECT}
      where ou.org_id = ? and not u.is_service_account
        and (? = '' or u.login ilike ? or u.email ilike ? or u.name ilike ?)
      order by u.login, u.email
      limit ?`,
    [orgId, query, pattern, pattern, pattern, limit],
  );
  return rows.map((row) => toMember(orgId, row));
}

/** `listOrgMembers` (unfiltered) of several orgs in one statement; orgs without members map to an empty list. */
export async function listMembersOfOrgs(em: EntityManager, orgIds: readonly number[]): Promise<Map<number, OrgMember[]>> {
  const byOrg = new Map<number, OrgMember[]>(orgIds.map((id) => [id, []]));
  if (orgIds.length === 0) return byOrg;
  const rows = await em.execute<Array<MemberRow & { org_id: number }>>(
    `${MEMBER_SELECT.replace('select ', 'select ou.org_id, ')}
      where ou.org_id = any(string_to_array(?, ',')::int[]) and not u.is_service_account
      order by u.login, u.email`,
    [orgIds.join(',')],
  );
  for (const row of rows) byOrg.get(row.org_id)?.push(toMember(row.org_id, row));
  return byOrg;
}

/** Memberships (users only) by `[orgId, userId]` pairs, in one statement; pairs that are none are left out. */
export async function readMemberships(em: EntityManager, pairs: ReadonlyArray<readonly [number, number]>): Promise<OrgMember[]> {
  if (pairs.length === 0) return [];
  const rows = await em.execute<Array<MemberRow & { org_id: number }>>(
    `${MEMBER_SELECT.replace('select ', 'select ou.org_id, ')}
      join unnest(string_to_array(?, ',')::int[], string_to_array(?, ',')::int[]) as p(org_id, user_id)
        on p.org_id = ou.org_id and p.user_id = ou.user_id
      where not u.is_service_account`,
    [pairs.map((p) => p[0]).join(','), pairs.map((p) => p[1]).join(',')],
  );
  return rows.map((row) => toMember(row.org_id, row));
}

/** Those of `userIds` who are members of the org now (users only), in no particular order. */
export async function readOrgMembers(em: EntityManager, orgId: number, userIds: number[]): Promise<OrgMember[]> {
  if (userIds.length === 0) return [];
  const rows = await em.execute<MemberRow[]>(
    `${MEMBER_SELECT} where ou.org_id = ? and ou.user_id = any(string_to_array(?, ',')::int[]) and not u.is_service_account`,
    [orgId, userIds.join(',')],
  );
  return rows.map((row) => toMember(orgId, row));
}

/**
 * Adds an existing user (found by login, then e-mail, any case) to an org with a role. A user who
 * belongs to no org yet makes it its current one. 404 "User not found", 409 when already a member
 * (the body names the user, as the original's does).
 */
export async function addOrgMember(
  em: EntityManager,
  orgId: number,
  input: { loginOrEmail?: string | null; role?: string | null },
  actor: MemberActor,
): Promise<number> {
  const loginOrEmail = input.loginOrEmail ?? '';
  if (!loginOrEmail || !input.role) throw badRequest();
  const role = grantableRole(input.role, actor);
  if (loginOrEmail.includes('\0')) throw notFound(MESSAGES.orgUser.userNotFound);
  const [user] = await em.execute<Array<{ id: number }>>(
    `select id from "user" where (lower(login) = lower(?) or lower(email) = lower(?)) and not is_service_account
      order by (lower(login) = lower(?)) desc limit 1`,
    [loginOrEmail, loginOrEmail, loginOrEmail],
  );
  if (!user) throw notFound(MESSAGES.orgUser.userNotFound);
  const alreadyMember = () => new DomainError('CONFLICT', MESSAGES.orgUser.alreadyMember, { message: MESSAGES.orgUser.alreadyMember, userId: user.id });
  try {
    await em.transactional(async (tx) => {
      await assertOrgExists(tx, orgId);
      const [inserted] = await tx.execute<Array<{ id: number }>>(
        `insert into org_user (org_id, user_id, role) values (?, ?, ?) on conflict (org_id, user_id) do nothing returning id`,
        [orgId, user.id, role],
      );
      if (!inserted) throw alreadyMember();
      // A user whose current org is not one of its orgs acts in the new one from now on.
      await tx.execute(
        `update "user" u set org_id = ?, updated = now() where u.id = ?
            and (u.org_id is null or not exists (select 1 from org_user ou where ou.user_id = u.id and ou.org_id = u.org_id))`,
        [orgId, user.id],
      );
    });
  } catch (error) {
    // The org or the user went away meanwhile (foreign key violation).
    if ((error as { code?: string }).code === '23503') throw notFound(MESSAGES.org.notFound);
    if (uniqueViolation(error) !== null) throw alreadyMember();
    throw error;
  }
  return user.id;
}

/** Changes a member's role; the org's last Admin cannot be demoted (400), however requests race. */
export async function updateOrgMemberRole(em: EntityManager, orgId: number, userId: number, roleInput: string | null | undefined, actor: MemberActor): Promise<void> {
  const role = grantableRole(roleInput, actor);
  await guardOrgAdmins(em, orgId, MESSAGES.orgUser.lastAdminDemoted, async (tx) => {
    const [updated] = await tx.execute<Array<{ id: number }>>(
      `update org_user ou set role = ? from "user" u
        where ou.org_id = ? and ou.user_id = ? and u.id = ou.user_id and not u.is_service_account returning ou.id`,
      [role, orgId, userId],
    );
    if (!updated) throw notFound(MESSAGES.orgUser.userNotFound);
  });
}

/**
 * Removes a member from an org; the org's last Admin cannot be removed (400), however requests
 * race. If it was the user's current org, another of its orgs becomes current, or none. With
 * `deleteOrphan` (the current-org route, as in the original) a user left in no org is deleted
 * altogether, unless it is a server admin: that one only leaves the org.
 * Returns whether the user was deleted.
 */
export async function removeOrgMember(em: EntityManager, orgId: number, userId: number, options: { deleteOrphan: boolean }): Promise<boolean> {
  return guardOrgAdmins(em, orgId, MESSAGES.orgUser.lastAdminRemoved, async (tx) => {
    const [removed] = await tx.execute<Array<{ id: number }>>(
      `delete from org_user ou using "user" u
        where ou.org_id = ? and ou.user_id = ? and u.id = ou.user_id and not u.is_service_account returning ou.id`,
      [orgId, userId],
    );
    if (!removed) throw notFound(MESSAGES.orgUser.userNotFound);
    const [other] = await tx.execute<Array<{ org_id: number }>>(
      `select ou.org_id from org_user ou join org o on o.id = ou.org_id where ou.user_id = ? order by lower(o.name), o.name, o.id limit 1`,
      [userId],
    );
    if (!other && options.deleteOrphan) {
      // Never a server admin (as the original since CVE-2025-3580): an org Admin could otherwise
      // delete one. It stays, in no org; the row lock makes a concurrent promotion count.
      const [deleted] = await tx.execute<Array<{ id: number }>>('delete from "user" where id = ? and not is_admin returning id', [userId]);
      if (deleted) return true;
    }
    await tx.execute(
      `update "user" set org_id = ?, updated = now() where id = ? and (org_id is null or org_id = ?)`,
      [other?.org_id ?? null, userId, orgId],
    );
    return false;
  });
}
