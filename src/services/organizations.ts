import type { EntityManager } from '@mikro-orm/postgresql';
import { badRequest, conflict, notFound, uniqueViolation } from '../errors/domain.ts';
import { MESSAGES } from '../errors/messages.ts';
import { containsPattern, pageWindow, type Paging } from './paging.ts';
import { assertStorableText, MAX_LOGIN_LENGTH } from './users.ts';

/** An org as the original server shows one (OrgDetailsDTO); addresses are not kept, so always empty. */
export interface OrgDetails {
  id: number;
  name: string;
  address: { address1: string; address2: string; city: string; zipCode: string; state: string; country: string };
}

export interface OrgSearch extends Paging {
  /** Exact name to match. */
  name?: string | null;
}

const EMPTY_ADDRESS = Object.freeze({ address1: '', address2: '', city: '', zipCode: '', state: '', country: '' });

function details(row: { id: number; name: string }): OrgDetails {
  return { id: row.id, name: row.name, address: { ...EMPTY_ADDRESS } };
}

/** An org's name as the original binds it: required (400 "bad request data" when empty, spaces alone included), stored as sent. */
function orgName(name: string | null | undefined): string {
  if (!name || name.trim() === '') throw badRequest();
  assertStorableText(name, 'name', MAX_LOGIN_LENGTH);
  return name;
}

export async function getOrg(em: EntityManager, id: number): Promise<OrgDetails> {
  const [row] = await em.execute<Array<{ id: number; name: string }>>('select id, name from org where id = ?', [id]);
  if (!row) throw notFound(MESSAGES.org.notFound);
  return details(row);
}

/** Orgs by id, in one statement; unknown ids are left out. */
export async function getOrgs(em: EntityManager, ids: readonly number[]): Promise<OrgDetails[]> {
  if (ids.length === 0) return [];
  const rows = await em.execute<Array<{ id: number; name: string }>>('select id, name from org where id = any(string_to_array(?, \',\')::int[])', [ids.join(',')]);
  return rows.map(details);
}

/** Every org whose name starts with `query`, by id. */
export async function listOrgs(em: EntityManager, query: string): Promise<OrgDetails[]> {
  if (query.includes('\0')) throw badRequest();
  const rows = await em.execute<Array<{ id: number; name: string }>>(
    `select id, name from org where (? = '' or name like ?) order by id`,
    [query, containsPattern(query).slice(1)],
  );
  return rows.map(details);
}

/** By exact (case-sensitive) name, as the original's unique name lookup. */
export async function getOrgByName(em: EntityManager, name: string): Promise<OrgDetails> {
  if (name.includes('\0')) throw notFound(MESSAGES.org.notFound);
  const [row] = await em.execute<Array<{ id: number; name: string }>>('select id, name from org where name = ?', [name]);
  if (!row) throw notFound(MESSAGES.org.notFound);
  return details(row);
}

/**
 * Orgs by id, optionally those whose name starts with `query` or equals `name`. Pages count from
 * 0 here, as in the original (its default page is 0); a page past the end is empty.
 */
export async function searchOrgs(em: EntityManager, search: OrgSearch): Promise<Array<{ id: number; name: string }>> {
  const { perPage, offset } = pageWindow(search, 0);
  const query = search.query ?? '';
  const name = search.name ?? '';
  if (query.includes('\0') || name.includes('\0')) throw badRequest();
  // A prefix: the pattern built for "contains" without its leading wildcard.
  const prefix = containsPattern(query).slice(1);
  return em.execute<Array<{ id: number; name: string }>>(
    `select id, name from org where (? = '' or name like ?) and (? = '' or name = ?) order by id limit ? offset ?`,
    [query, prefix, name, name, perPage, offset],
  );
}

/**
 * A new org; `creatorId`, when given, becomes its Admin (the creator's current org is unchanged).
 * Names are unique: 409 "Organization name taken", also when two creations race.
 */
export async function createOrg(em: EntityManager, nameInput: string | null | undefined, creatorId: number | null): Promise<number> {
  const name = orgName(nameInput);
  try {
    return await em.transactional(async (tx) => {
      const [org] = await tx.execute<Array<{ id: number }>>('insert into org (name) values (?) returning id', [name]);
      if (creatorId !== null) {
        await tx.execute(`insert into org_user (org_id, user_id, role) values (?, ?, 'Admin')`, [org!.id, creatorId]);
      }
      return org!.id;
    });
  } catch (error) {
    if (uniqueViolation(error) === 'org_name_key') throw conflict(MESSAGES.org.nameTaken);
    throw error;
  }
}

/** Renames an org; a name another org has is 400 "Organization name taken" (the original's status here). */
export async function updateOrg(em: EntityManager, id: number, nameInput: string | null | undefined): Promise<void> {
  const name = orgName(nameInput);
  try {
    const [row] = await em.execute<Array<{ id: number }>>('update org set name = ?, updated = now() where id = ? returning id', [name, id]);
    if (!row) throw notFound(MESSAGES.org.notFound);
  } catch (error) {
    if (uniqueViolation(error) === 'org_name_key') throw badRequest(MESSAGES.org.nameTaken);
    throw error;
  }
}

/**
 * Deletes an org with everything it owns, in one transaction: its data sources, API keys and
 * service-account tokens, service accounts, dashboards, alerts and memberships (the foreign keys
 * cascade from the org row; service accounts are users, deleted here). Members whose current org
 * it was move to another org of theirs, or to none. Every instance's caches forget it, through the
 * triggers: data_source's (its rows go by the cascade) for the proxy cache, and those of user,
 * org_user and api_key for the credential caches. The org the caller is acting in cannot be deleted (400).
 */
export async function deleteOrg(em: EntityManager, id: number, callerOrgId: number): Promise<void> {
  if (id === callerOrgId) throw badRequest(MESSAGES.org.deleteCurrent);
  await em.transactional(async (tx) => {
    // Locks the row: members added or data sources created meanwhile wait, then fail on the foreign key.
    const [org] = await tx.execute('select id from org where id = ? for update', [id]);
    if (!org) throw notFound(MESSAGES.org.deleteNotFound);
    await tx.execute(
      `delete from "user" where is_service_account
          and (org_id = ? or id in (select user_id from org_user where org_id = ?))`,
      [id, id],
    );
    await tx.execute(
      `update "user" u set org_id = (
          select ou.org_id from org_user ou join org o on o.id = ou.org_id
           where ou.user_id = u.id and ou.org_id <> ? order by lower(o.name), o.name, o.id limit 1),
         updated = now()
        where u.org_id = ?`,
      [id, id],
    );
    await tx.execute('delete from org where id = ?', [id]);
  });
}
