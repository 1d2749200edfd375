import type { EntityManager, MikroORM } from '@mikro-orm/postgresql';
import type { ChangeListener } from '../../db/change-listener.ts';
import type { Logger } from '../../logging/logger.ts';
import { listOrgMembers, readOrgMembers, type OrgMember } from '../../services/org-members.ts';
import type { LiveStream } from '../stream.ts';
import type { LiveStreams, StreamRequest } from '../streams.ts';
import { OrgFeed } from './org-feed.ts';

/** Notified by triggers (migration 20261125100000) whenever an org's members or their profiles change. */
export const ORG_MEMBERS_CHANNEL = 'dashgate_org_members_changed';

export type OrgMemberChangeKind = 'ADDED' | 'UPDATED' | 'REMOVED';

export interface OrgMemberEvent {
  kind: OrgMemberChangeKind;
  orgId: number;
  userId: number;
  /** The member's login (before removal, for a removal). */
  login: string;
  /** The membership as stored after the change; null when removed. */
  member: OrgMember | null;
}

/** One member of one org; both null (a truncate) when every org must look at all of its members again. */
export interface OrgMemberNotice {
  orgId: number | null;
  userId: number | null;
}

/** Reads `<orgId>:<userId>` or `*`; null for anything else. */
export function parseOrgMemberNotice(payload: string): OrgMemberNotice | null {
  const text = payload.trim();
  if (text === '*') return { orgId: null, userId: null };
  const match = /^(\d+):(\d+)$/.exec(text);
  if (!match) return null;
  const orgId = Number(match[1]);
  const userId = Number(match[2]);
  return Number.isSafeInteger(orgId) && Number.isSafeInteger(userId) ? { orgId, userId } : null;
}

/** The org's members by user id with their logins: what a feed knows when it starts. */
export async function loadOrgMemberLogins(em: EntityManager, orgId: number): Promise<Map<number, string>> {
  return new Map((await listOrgMembers(em, orgId)).map((m) => [m.userId, m.login]));
}

/**
 * What a batch of notices changed in the org, one event per member in the order they were heard,
 * read in one statement. `known` (user id to login) is kept up to date, to tell additions from
 * updates and to name the removed.
 */
export async function readOrgMemberChanges(em: EntityManager, orgId: number, known: Map<number, string>, notices: OrgMemberNotice[]): Promise<OrgMemberEvent[]> {
  const order = new Set<number>();
  let everyone = false;
  for (const notice of notices) {
    if (notice.userId === null) {
      everyone = true;
      continue;
    }
    order.delete(notice.userId); // re-inserted last, so events keep the order changes were heard in
    order.add(notice.userId);
  }
  const rows = everyone ? await listOrgMembers(em, orgId) : await readOrgMembers(em, orgId, [...order]);
  if (everyone) for (const id of [...known.keys(), ...rows.map((m) => m.userId)]) order.add(id);
  const byId = new Map(rows.map((member) => [member.userId, member]));

  const events: OrgMemberEvent[] = [];
  for (const userId of order) {
    const member = byId.get(userId);
    const previous = known.get(userId);
    if (member) {
      known.set(userId, member.login);
      events.push({ kind: previous === undefined ? 'ADDED' : 'UPDATED', orgId, userId, login: member.login, member });
    } else if (previous !== undefined) {
      known.delete(userId);
      events.push({ kind: 'REMOVED', orgId, userId, login: previous, member: null });
    }
    // Neither here nor known: added and removed before anyone here saw it, or a service account.
  }
  return events;
}

/** A subscriber that has not read yet only needs the latest state of each member. */
export function mergeOrgMemberEvents(older: OrgMemberEvent, newer: OrgMemberEvent): OrgMemberEvent | null {
  if (older.kind === 'ADDED' && newer.kind === 'REMOVED') return null; // never seen, now gone
  if (older.kind === 'ADDED' && newer.kind === 'UPDATED') return { ...newer, kind: 'ADDED' };
  if (older.kind === 'REMOVED' && newer.kind === 'ADDED') return { ...newer, kind: 'UPDATED' };
  return newer;
}

/**
 * The `orgMembersChanged` feed: members of an org added, removed, or changed (role, profile,
 * disabled), heard from `dashgate_org_members_changed`.
 */
export class OrgMemberFeed {
  readonly #log: Logger;
  readonly #feed: OrgFeed<OrgMemberEvent, OrgMemberNotice, string>;

  constructor(streams: LiveStreams, orm: MikroORM, changes: ChangeListener, log: Logger) {
    this.#log = log;
    this.#feed = new OrgFeed(streams, orm, log, {
      what: 'an org member change',
      load: loadOrgMemberLogins,
      read: readOrgMemberChanges,
      keyOf: (event) => event.userId,
      merge: mergeOrgMemberEvents,
    });
    changes.subscribe(ORG_MEMBERS_CHANNEL, {
      notify: (payload) => this.#onNotice(payload),
      // A lost listener ends every stream (LiveStreams hears it on its own channel).
      reset: () => undefined,
    });
  }

  /** Members of the caller's org added, removed, or changed, from now on. */
  open(request: StreamRequest): LiveStream<OrgMemberEvent> {
    return this.#feed.open(request);
  }

  #onNotice(payload: string): void {
    const notice = parseOrgMemberNotice(payload);
    if (!notice) {
      this.#log.debug({ payload }, 'org member notification names no member; ignored by subscriptions');
      return;
    }
    this.#feed.queue(notice.orgId, notice);
  }
}
