import { randomUUID } from 'node:crypto';
import { LockMode, type EntityManager } from '@mikro-orm/postgresql';
import { DataSource } from '../db/entities/index.ts';
import { dataSourceSecretBinding, SecretBox } from '../db/secrets.ts';
import { accessDenied, badRequest, conflict, forbidden, notFound, uniqueViolation } from '../errors/domain.ts';
import { MESSAGES } from '../errors/messages.ts';
import { ACTION_NAMES, type DataSourceAction } from './data-source-access.ts';
import { accessCondition, accessConditionByOrg, type DataSourceCaller } from './data-source-permissions.ts';
import { UID_PATTERN } from './data-source-types.ts';
import { escapeLike } from './paging.ts';

export type DataSourceRow = InstanceType<typeof DataSource.class>;

/** The columns every reader of a data source sees: a row without its bookkeeping. */
const RECORD_FIELDS = [
  'id', 'orgId', 'uid', 'name', 'type', 'access', 'url', 'user', 'database', 'basicAuth', 'basicAuthUser',
  'withCredentials', 'isDefault', 'jsonData', 'secureJsonData', 'version', 'readOnly',
] as const;

/** A data source as read: a managed entity, or a plain record from a list. */
export type DataSourceRecord = Pick<DataSourceRow, (typeof RECORD_FIELDS)[number]>;

/**
 * RECORD_FIELDS, each column selected under its property's name, so that the driver's rows are
 * the records as they are (read with `execute(method, false)`): MikroORM's mapping of column
 * names to properties made two more objects per row (listing 5,000 data sources: a tenth of its CPU).
 */
const RECORD_SELECT = RECORD_FIELDS.map((field) => `${field} as ${field}` as const);

/** Fields a client may send on create or update, already decoded from REST or GraphQL. */
export interface DataSourceInput {
  name?: string | null;
  type?: string | null;
  access?: string | null;
  url?: string | null;
  database?: string | null;
  user?: string | null;
  basicAuth?: boolean | null;
  basicAuthUser?: string | null;
  withCredentials?: boolean | null;
  isDefault?: boolean | null;
  jsonData?: unknown;
  secureJsonData?: unknown;
  uid?: string | null;
  version?: number | null;
  /** Legacy plaintext fields (up to v8 of the original); stored as the secrets of the same name. */
  password?: string | null;
  basicAuthPassword?: string | null;
}

/** A data source of an org by id or by uid: how every caller that acts on one names it. */
export type DataSourceKey = { id: number } | { uid: string };
/** A data source of an org by id, uid or (REST's by-name routes) name. */
export type DataSourceRef = DataSourceKey | { name: string };

/** Whose secrets they are: what every stored secret is bound to, with its key name. */
export interface SecretOwner {
  orgId: number;
  uid: string;
}

const MAX_NAME = 190;
const MAX_URL = 255;
const MAX_UID = 40;
/** The original server's list cap (`[datasources] datasource_limit`). */
const LIST_LIMIT = 5000;
/** Namespace of the per-org transaction lock that serialises writes touching `isDefault`. */
const DEFAULT_LOCK_NAMESPACE = 0x6473; // "ds"
/**
 * Channel on which a trigger announces every committed change of a data source row (payload
 * `<orgId>:<id>:<created|updated|deleted>`, or `all` after a TRUNCATE), for caches and
 * subscriptions on every instance; see migration 20261126000100.
 */
export const CHANGE_CHANNEL = 'dashgate_datasource_changed';

export interface DataSourceServiceOptions {
  secrets: SecretBox;
  /** `[auth.proxy] header_name` when auth proxy is on: data sources may not forward that header. */
  authProxyHeader: string | null;
}

export class DataSourceService {
  /** The entity, for readers (such as the proxy's cache) that load rows themselves. */
  readonly entity = DataSource;
  readonly #secrets: SecretBox;
  readonly #authProxyHeader: string | null;

  constructor(options: DataSourceServiceOptions) {
    this.#secrets = options.secrets;
    this.#authProxyHeader = options.authProxyHeader?.toLowerCase() ?? null;
  }

  /**
   * The data sources of the caller's org that it may read, ordered case-insensitively by name as
   * the original server's handler does: one statement, whose condition is the permission rule
   * (nothing the caller may not read is loaded). Plain records, not entities: nothing here is
   * changed, and hydrating thousands of entities into the identity map cost three times the rest
   * of the request.
   */
  async list(em: EntityManager, caller: DataSourceCaller): Promise<DataSourceRecord[]> {
    const { qb } = this.#inCallersOrg(em, caller, 'read', {});
    const rows = await qb.orderBy({ name: 'asc' }).limit(LIST_LIMIT).execute<DataSourceRecord[]>('all', false);
    return sortByName(rows);
  }

  /**
   * THE way to load one data source for an action (`read`, `query`, `write`, `admin`) on behalf of
   * a caller: every entry point that reads or changes a data source (reads, updates, deletes, the
   * permission routes) goes through this; those that call it (the proxy, health checks, queries,
   * resources) open it through the upstream layer, with the same rule from the access cache. One
   * statement on success: the
   * row is selected only when the permission rule lets the caller do `action`. Otherwise 403 naming
   * the original's missing action, or 404 when the org has no such data source and the caller is
   * an org Admin or only wanted to read it.
   */
  async getFor(em: EntityManager, caller: DataSourceCaller, ref: DataSourceRef, action: DataSourceAction): Promise<DataSourceRecord> {
    const { qb, condition } = this.#inCallersOrg(em, caller, action, ref);
    const row = await qb.limit(1).execute<DataSourceRecord | undefined>('get', false);
    if (row) return row;
    // As the original's scope check: a change refused whether or not the data source exists (only
    // org Admins learn that it does not); a read refused only when it exists.
    if (condition && (action !== 'read' && action !== 'query' || (await this.find(em, caller.orgId, ref)))) throw accessDenied(ACTION_NAMES[action]);
    throw notFound(MESSAGES.dataSource.notFound);
  }

  /** `getFor`'s one statement, answering null where `getFor` refuses (for the graph, which answers null there). */
  async findFor(em: EntityManager, caller: DataSourceCaller, ref: DataSourceRef, action: DataSourceAction): Promise<DataSourceRecord | null> {
    const row = await this.#inCallersOrg(em, caller, action, ref).qb.limit(1).execute<DataSourceRecord | undefined>('get', false);
    return row ?? null;
  }

  /**
   * The data sources several callers may read, one per org (the caller as it is in that org), in
   * one statement, each org's ordered as `list` orders it (for the graph, which reads a level of
   * orgs at once). Orgs without any map to an empty list.
   */
  async listForOrgs(em: EntityManager, callers: readonly DataSourceCaller[]): Promise<Map<number, DataSourceRecord[]>> {
    const byOrg = new Map<number, DataSourceRecord[]>(callers.map((caller) => [caller.orgId, []]));
    if (callers.length === 0) return byOrg;
    // One org (the usual level under `viewer`): `list`'s statement, the cheapest to build.
    if (callers.length === 1) return byOrg.set(callers[0]!.orgId, await this.list(em, callers[0]!));
    const readable = accessConditionByOrg('ds', callers, 'read');
    const rows = await em.createQueryBuilder(DataSource, 'ds').select(RECORD_SELECT)
      .where(readable.sql, readable.params).orderBy({ name: 'asc' }).execute<DataSourceRecord[]>('all', false);
    for (const row of sortByName(rows)) {
      const list = byOrg.get(row.orgId)!;
      if (list.length < LIST_LIMIT) list.push(row);
    }
    return byOrg;
  }

  /** Data sources by id among those `callers` (one per org) may read, in one statement. */
  async findByIds(em: EntityManager, ids: readonly number[], callers: readonly DataSourceCaller[]): Promise<DataSourceRecord[]> {
    if (ids.length === 0 || callers.length === 0) return [];
    const id = ids.length === 1 ? ids[0]! : { $in: [...ids] };
    // One org (a token's, or a user's only one): the one-org form, as `getFor` reads.
    if (callers.length === 1) return this.#inCallersOrg(em, callers[0]!, 'read', { id }).qb.execute<DataSourceRecord[]>('all', false);
    const readable = accessConditionByOrg('ds', callers, 'read');
    return em.createQueryBuilder(DataSource, 'ds').select(RECORD_SELECT)
      .where({ id }).andWhere(readable.sql, readable.params).execute<DataSourceRecord[]>('all', false);
  }

  /**
   * The read every one-org lookup starts from: records of the caller's org matching `where`, with
   * the permission rule for `action` beside it (none for an org Admin, hence `condition` null).
   * The org in the object where is the form MikroORM builds and PostgreSQL plans most cheaply.
   */
  #inCallersOrg(em: EntityManager, caller: DataSourceCaller, action: DataSourceAction, where: DataSourceRef | { id: number | { $in: number[] } } | Record<never, never>) {
    const qb = em.createQueryBuilder(DataSource, 'ds').select(RECORD_SELECT).where({ orgId: caller.orgId, ...where });
    const condition = accessCondition('ds', caller, action);
    if (condition) qb.andWhere(condition.sql, condition.params);
    return { qb, condition };
  }

  /**
   * One data source as a plain record, or null, whoever asks: for callers that check permissions
   * themselves (the proxy's cache, with `DataSourceAccessCache`) or need none (provisioning).
   * Read, not managed: hydrating an entity into the identity map for a read took as much CPU as
   * the rest of a `GET /api/datasources/:id`.
   */
  async find(em: EntityManager, orgId: number, ref: DataSourceRef): Promise<DataSourceRecord | null> {
    const row = await em.createQueryBuilder(DataSource).select(RECORD_SELECT).where({ orgId, ...ref }).limit(1).execute<DataSourceRecord | undefined>('get', false);
    return row ?? null;
  }

  async get(em: EntityManager, orgId: number, ref: DataSourceRef): Promise<DataSourceRecord> {
    const row = await this.find(em, orgId, ref);
    if (!row) throw notFound(MESSAGES.dataSource.notFound);
    return row;
  }

  /** Names of stored secrets; only keys are ever reported, never values. */
  secureJsonFields(row: Pick<DataSourceRecord, 'secureJsonData'>): Record<string, boolean> {
    const fields: Record<string, boolean> = {};
    for (const key of Object.keys(row.secureJsonData ?? {})) fields[key] = true;
    return fields;
  }

  /** Throws when a secret was sealed with another key, or for another data source or key name. */
  decryptSecrets(row: Pick<DataSourceRecord, 'orgId' | 'uid' | 'secureJsonData'>): Record<string, string> {
    const out: Record<string, string> = {};
    for (const [key, sealed] of Object.entries(row.secureJsonData ?? {})) out[key] = this.#open(row, key, sealed);
    return out;
  }

  /** The stored form of secret `key` of the data source `owner` (for tools writing rows themselves). */
  sealSecret(owner: SecretOwner, key: string, value: string): string {
    return this.#secrets.encrypt(value, dataSourceSecretBinding(owner.orgId, owner.uid, key));
  }

  #open(owner: SecretOwner, key: string, sealed: string): string {
    return this.#secrets.decrypt(sealed, dataSourceSecretBinding(owner.orgId, owner.uid, key));
  }

  async create(em: EntityManager, orgId: number, input: DataSourceInput): Promise<DataSourceRow> {
    const type = requiredString(input.type);
    const access = requiredString(input.access);
    const url = input.url ?? '';
    if (url !== '') validateUrl(url);
    const jsonData = jsonObject(input.jsonData);
    this.#checkHeaders(jsonData, 'Failed to add datasource');
    const uid = input.uid ? validUid(input.uid) : generateUid();
    const secrets = this.#mergeSecrets({ orgId, uid }, null, input, 'Failed to add datasource');
    let name = (input.name ?? '').trim() === '' ? null : input.name!;
    if (name !== null && name.length > MAX_NAME) throw badRequest(MESSAGES.dataSource.invalidName);

    try {
      return await em.transactional(async (tx) => {
        await lockOrgDefaults(tx, orgId);
        name ??= await firstFreeName(tx, orgId, type);
        if (await tx.count(DataSource, { orgId, name })) throw conflict(MESSAGES.dataSource.nameTaken);
        // The org's first data source becomes its default.
        const isDefault = Boolean(input.isDefault) || (await tx.count(DataSource, { orgId })) === 0;
        if (isDefault) await demoteDefault(tx, orgId, null);
        const row = tx.create(DataSource, {
          orgId,
          uid,
          name,
          type,
          access,
          url,
          user: input.user ?? '',
          database: input.database ?? '',
          basicAuth: Boolean(input.basicAuth),
          basicAuthUser: input.basicAuthUser ?? '',
          withCredentials: Boolean(input.withCredentials),
          isDefault,
          jsonData,
          secureJsonData: secrets,
          version: 1,
          readOnly: false,
        });
        await tx.flush();
        return row;
      });
    } catch (error) {
      throw mapUniqueViolation(error, MESSAGES.dataSource.nameTaken);
    }
  }

  /**
   * Full replace, as PUT is in the original server: omitted booleans become false, `user`,
   * `database` and `jsonData` are cleared, while an empty `url`, `basicAuthUser` or `uid` keeps
   * the stored value. Secrets not mentioned are kept. A non-zero `version` must not be older than
   * the stored one; the new version is the request's plus one.
   */
  async update(em: EntityManager, caller: DataSourceCaller, ref: DataSourceKey, input: DataSourceInput): Promise<DataSourceRow> {
    const orgId = caller.orgId;
    // Required, as the original binds it: spaces alone are no name either.
    const name = requiredString(input.name?.trim() === '' ? '' : input.name);
    const type = requiredString(input.type);
    const access = requiredString(input.access);
    if (name.length > MAX_NAME) throw badRequest(MESSAGES.dataSource.invalidName);
    // An empty URL keeps the stored one (the original's parser accepts it too).
    if (input.url) validateUrl(input.url);
    const jsonData = jsonObject(input.jsonData);
    this.#checkHeaders(jsonData, 'Failed to update datasource');
    const newUid = input.uid ? validUid(input.uid) : null;
    const requestVersion = input.version ?? 0;

    try {
      return await em.transactional(async (tx) => {
        await this.getFor(tx, caller, ref, 'write');
        await lockOrgDefaults(tx, orgId);
        const row = await tx.findOne(DataSource, { orgId, ...ref }, { lockMode: LockMode.PESSIMISTIC_WRITE });
        if (!row) throw notFound(MESSAGES.dataSource.notFound);
        if (row.readOnly) throw forbidden(MESSAGES.dataSource.readOnlyUpdate);
        if (requestVersion !== 0 && row.version > requestVersion) throw conflict(MESSAGES.dataSource.versionConflict);
        if (name !== row.name && (await tx.count(DataSource, { orgId, name, id: { $ne: row.id } }))) {
          throw conflict(`Failed to update datasource: ${MESSAGES.dataSource.nameTaken}`);
        }
        const isDefault = Boolean(input.isDefault);
        if (isDefault) await demoteDefault(tx, orgId, row.id);
        const uid = newUid ?? row.uid;
        const secureJsonData = this.#mergeSecrets({ orgId, uid }, row, input, 'Failed to update datasource');
        tx.assign(row, {
          name,
          type,
          access,
          url: input.url ? input.url : row.url,
          user: input.user ?? '',
          database: input.database ?? '',
          basicAuth: Boolean(input.basicAuth),
          basicAuthUser: input.basicAuthUser ? input.basicAuthUser : row.basicAuthUser,
          withCredentials: Boolean(input.withCredentials),
          isDefault,
          jsonData,
          secureJsonData,
          uid,
          version: requestVersion + 1,
          // As in the original, an API update takes a data source out of provisioning's pruning.
          isPrunable: false,
        });
        await tx.flush();
        return row;
      });
    } catch (error) {
      throw mapUniqueViolation(error, `Failed to update datasource: ${MESSAGES.dataSource.nameTaken}`);
    }
  }

  /** Deletes and returns the id of what was deleted. */
  async delete(em: EntityManager, caller: DataSourceCaller, ref: DataSourceRef): Promise<number> {
    const orgId = caller.orgId;
    return em.transactional(async (tx) => {
      await this.getFor(tx, caller, ref, 'delete');
      const row = await tx.findOne(DataSource, { orgId, ...ref }, { lockMode: LockMode.PESSIMISTIC_WRITE });
      if (!row) throw notFound(MESSAGES.dataSource.notFound);
      if (row.readOnly) throw forbidden(MESSAGES.dataSource.readOnlyDelete);
      const deleted = await tx.nativeDelete(DataSource, { id: row.id });
      // A concurrent delete that won the race leaves nothing for this one.
      if (deleted === 0) throw notFound(MESSAGES.dataSource.notFound);
      return row.id;
    });
  }

  /**
   * Start-up provisioning: makes the org's data source `name` exactly as declared, read-only or
   * not (provisioning owns those rows, so the read-only guard does not apply). Nothing is written
   * when the row already matches, so restarts leave versions alone. A differing declaration whose
   * `version` is older than the stored one is skipped ('outdated'), as in the original server,
   * which lets API edits of editable provisioned data sources survive restarts until the file's
   * version is raised to the stored one.
   */
  async provision(em: EntityManager, orgId: number, input: DataSourceInput & { name: string; readOnly: boolean; isPrunable?: boolean }): Promise<'created' | 'updated' | 'unchanged' | 'outdated'> {
    const name = input.name;
    if (name.trim() === '' || name.length > MAX_NAME) throw badRequest(MESSAGES.dataSource.invalidName);
    const url = input.url ?? '';
    if (url !== '') validateUrl(url);
    const jsonData = jsonObject(input.jsonData);
    this.#checkHeaders(jsonData, 'Failed to provision datasource');
    const fields = {
      type: requiredString(input.type),
      access: requiredString(input.access),
      url,
      user: input.user ?? '',
      database: input.database ?? '',
      basicAuth: Boolean(input.basicAuth),
      basicAuthUser: input.basicAuthUser ?? '',
      withCredentials: Boolean(input.withCredentials),
      isDefault: Boolean(input.isDefault),
      readOnly: input.readOnly,
      isPrunable: Boolean(input.isPrunable),
    };
    const uid = input.uid ? validUid(input.uid) : null;
    const requestVersion = input.version ?? 0;

    try {
      return await em.transactional(async (tx) => {
        await lockOrgDefaults(tx, orgId);
        const row = await tx.findOne(DataSource, { orgId, name }, { lockMode: LockMode.PESSIMISTIC_WRITE });
        if (row) {
          const same = (Object.keys(fields) as Array<keyof typeof fields>).every((key) => row[key] === fields[key]);
          if (same && (uid === null || uid === row.uid) && canonicalJson(row.jsonData) === canonicalJson(jsonData) && this.#secretsMatch(row, input)) {
            return 'unchanged';
          }
          if (requestVersion !== 0 && row.version > requestVersion) return 'outdated';
        }
        if (fields.isDefault) await demoteDefault(tx, orgId, row?.id ?? null);
        const finalUid = uid ?? row?.uid ?? generateUid();
        const secureJsonData = this.#mergeSecrets({ orgId, uid: finalUid }, row, input, 'Failed to provision datasource');
        if (row) tx.assign(row, { ...fields, jsonData, uid: finalUid, secureJsonData, version: requestVersion + 1 });
        else tx.create(DataSource, { orgId, name, ...fields, jsonData, uid: finalUid, secureJsonData, version: 1 });
        await tx.flush();
        return row ? 'updated' : 'created';
      });
    } catch (error) {
      throw mapUniqueViolation(error, MESSAGES.dataSource.nameTaken);
    }
  }

  /** Data sources provisioned from a file with `prune: true`, for provisioning to delete those no file declares any more. */
  async listPrunable(em: EntityManager): Promise<Array<{ orgId: number; name: string }>> {
    return em.find(DataSource, { isPrunable: true }, { fields: ['orgId', 'name'], orderBy: { id: 'asc' } });
  }

  /** Provisioning's `deleteDatasources`: removes the org's data source `name`, read-only or not; false when there was none. */
  async deleteProvisioned(em: EntityManager, orgId: number, name: string): Promise<boolean> {
    return em.transactional(async (tx) => {
      const row = await tx.findOne(DataSource, { orgId, name }, { lockMode: LockMode.PESSIMISTIC_WRITE });
      if (!row) return false;
      return (await tx.nativeDelete(DataSource, { id: row.id })) > 0;
    });
  }

  /** Whether every secret the input sets (or clears, with '') is already stored with that value. */
  #secretsMatch(row: DataSourceRow, input: DataSourceInput): boolean {
    const stored = row.secureJsonData ?? {};
    const incoming: Record<string, string> = { ...stringMap(input.secureJsonData) };
    if (input.password) incoming.password = input.password;
    if (input.basicAuthPassword) incoming.basicAuthPassword = input.basicAuthPassword;
    return Object.entries(incoming).every(([key, value]) => {
      if (value === '') return !(key in stored);
      if (!(key in stored)) return false;
      try {
        return this.#open(row, key, stored[key]!) === value;
      } catch {
        return false; // sealed with another secret_key, or not for this row: rewrite it
      }
    });
  }

  /**
   * The secrets `owner` stores after a write: those stored on `row` (if any) that the input does
   * not mention, plus the input's, each sealed for `owner`. When the uid changes, the kept ones are
   * opened and sealed again for the new uid.
   */
  #mergeSecrets(owner: SecretOwner, row: DataSourceRow | null, input: DataSourceInput, failure: string): Record<string, string> {
    const incoming: Record<string, string> = { ...stringMap(input.secureJsonData) };
    // Legacy top-level fields only ever set a secret; an empty one means "unchanged".
    if (input.password) incoming.password = input.password;
    if (input.basicAuthPassword) incoming.basicAuthPassword = input.basicAuthPassword;
    // TLS material is stored as sent, whatever it holds (a file path, as the Ansible collection's
    // own example sends, is stored too), as the original does: where it is used, the call fails
    // naming the field; the graph's write payloads warn about it at once (`tlsSecretWarnings`).
    const merged: Record<string, string> = {};
    for (const [key, sealed] of Object.entries(row?.secureJsonData ?? {})) {
      if (key in incoming) continue;
      if (row!.uid === owner.uid) {
        merged[key] = sealed;
        continue;
      }
      let plaintext: string;
      try {
        plaintext = this.#open(row!, key, sealed);
      } catch {
        throw conflict(`${failure}: ${MESSAGES.dataSource.secretsUnreadable}`);
      }
      merged[key] = this.sealSecret(owner, key, plaintext);
    }
    for (const [key, value] of Object.entries(incoming)) {
      // An empty value clears the secret, so it leaves `secureJsonFields` too.
      if (value !== '') merged[key] = this.sealSecret(owner, key, value);
    }
    return merged;
  }

  #checkHeaders(jsonData: Record<string, unknown>, message: string): void {
    if (!this.#authProxyHeader) return;
    for (const [key, value] of Object.entries(jsonData)) {
      if (/^httpHeaderName\d+$/.test(key) && typeof value === 'string' && value.toLowerCase() === this.#authProxyHeader) {
        throw badRequest(message);
      }
    }
  }
}

/** Case-insensitively by name, lowering each name once rather than in every comparison. */
function sortByName<T extends { name: string }>(rows: T[]): T[] {
  const keyed = rows.map((row) => ({ row, key: row.name.toLowerCase() }));
  keyed.sort((a, b) => (a.key < b.key ? -1 : a.key > b.key ? 1 : 0));
  return keyed.map((k) => k.row);
}

function requiredString(value: string | null | undefined): string {
  if (typeof value !== 'string' || value === '') throw badRequest(MESSAGES.http.badRequest);
  return value;
}

/** As the original: a URL without a scheme gets `http://` before parsing, so `localhost:5432` is valid. */
export function validateUrl(url: string): void {
  if (url.length > MAX_URL) throw badRequest(MESSAGES.dataSource.invalidUrlLength);
  const withScheme = /^[^:]*:\/\//.test(url) ? url : `http://${url}`;
  try {
    new URL(withScheme);
  } catch {
    throw badRequest(MESSAGES.dataSource.invalidUrl);
  }
}

function validUid(uid: string): string {
  if (uid.length > MAX_UID || !UID_PATTERN.test(uid)) throw badRequest(MESSAGES.dataSource.invalidUid);
  return uid;
}

/** A UUID whose first character is a letter, so the uid never looks like a numeric id. */
function generateUid(): string {
  const uuid = randomUUID();
  return /^[a-f]/.test(uuid) ? uuid : 'abcdef'[Number.parseInt(uuid[0]!, 16) % 6] + uuid.slice(1);
}

/** `jsonData` as stored: an object, `{}` when absent or null, as the original server saves it. */
function jsonObject(value: unknown): Record<string, unknown> {
  if (value === undefined || value === null) return {};
  if (typeof value !== 'object' || Array.isArray(value)) throw badRequest(MESSAGES.http.badRequest);
  return value as Record<string, unknown>;
}

function stringMap(value: unknown): Record<string, string> {
  if (value === undefined || value === null) return {};
  if (typeof value !== 'object' || Array.isArray(value)) throw badRequest(MESSAGES.http.badRequest);
  for (const v of Object.values(value)) if (typeof v !== 'string') throw badRequest(MESSAGES.http.badRequest);
  return value as Record<string, string>;
}

async function firstFreeName(em: EntityManager, orgId: number, type: string): Promise<string> {
  const taken = new Set(
    (await em.getConnection().execute<{ name: string }[]>(
      'select lower(name) as name from data_source where org_id = ? and lower(name) like ?',
      [orgId, `${escapeLike(type.toLowerCase())}%`],
    )).map((r) => r.name),
  );
  for (let i = 0; ; i++) {
    const candidate = i === 0 ? type : `${type}-${i}`;
    if (!taken.has(candidate.toLowerCase())) return candidate;
  }
}

async function lockOrgDefaults(em: EntityManager, orgId: number): Promise<void> {
  await em.execute('select pg_advisory_xact_lock(?, ?)', [DEFAULT_LOCK_NAMESPACE, orgId]);
}

/** Clears the org's default (but `keep`); the trigger announces each data source that lost it. */
async function demoteDefault(em: EntityManager, orgId: number, keep: number | null): Promise<void> {
  await em.execute('update data_source set is_default = false where org_id = ? and is_default and id <> ?', [orgId, keep ?? 0]);
}

function mapUniqueViolation(error: unknown, nameMessage: string): unknown {
  const constraint = uniqueViolation(error);
  if (constraint === null) return error;
  if (constraint.includes('uid')) return conflict(MESSAGES.dataSource.uidTaken);
  if (constraint.includes('name')) return conflict(nameMessage);
  return error;
}

/** JSON with object keys sorted, to compare documents regardless of the key order jsonb returns. */
function canonicalJson(value: unknown): string {
  return JSON.stringify(value ?? null, (_key, v: unknown) =>
    v !== null && typeof v === 'object' && !Array.isArray(v) ? Object.fromEntries(Object.entries(v).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))) : v);
}
