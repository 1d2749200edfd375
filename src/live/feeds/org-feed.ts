import type { EntityManager, MikroORM } from '@mikro-orm/postgresql';
import type { Logger } from '../../logging/logger.ts';
import type { LiveStream } from '../stream.ts';
import { STREAM_ERRORS, type LiveStreams, type StreamRequest } from '../streams.ts';

/** A kind of per-org change (`E`), heard as notices (`N`), of things known by id with a `K` each. */
export interface OrgFeedKind<E, N, K> {
  /** For log lines: "could not read <what> for subscribers". */
  what: string;
  /** What the org has now: what a feed knows when it starts. */
  load(em: EntityManager, orgId: number): Promise<Map<number, K>>;
  /** The events a batch of notices amounts to; keeps `known` up to date. */
  read(em: EntityManager, orgId: number, known: Map<number, K>, notices: N[]): Promise<E[]>;
  /** Whether the stream may be told of `event`; everyone when absent. */
  admits?(em: EntityManager, stream: LiveStream<E>, event: E): boolean | Promise<boolean>;
  /** Events of one thing replace one another in a stream's queue... */
  keyOf(event: E): unknown;
  /** ...becoming this (null: both dropped). */
  merge(older: E, newer: E): E | null;
}

/** One org's streams and what this instance knows of the org. */
interface OrgState<E, N, K> {
  streams: Set<LiveStream<E>>;
  /** What of the org this instance knows of (by id), to tell creations from updates and name deletions. */
  known: Map<number, K> | null;
  pending: N[];
  running: boolean;
}

/**
 * A change feed kept per org: every change is read from the database once per instance, however
 * many subscribers get it, and only for orgs someone here is subscribed to. Notices of one org are
 * read in order, one batch at a time, one statement per batch.
 */
export class OrgFeed<E, N, K> {
  readonly #streams: LiveStreams;
  readonly #orm: MikroORM;
  readonly #log: Logger;
  readonly #kind: OrgFeedKind<E, N, K>;
  readonly #orgs = new Map<number, OrgState<E, N, K>>();

  constructor(streams: LiveStreams, orm: MikroORM, log: Logger, kind: OrgFeedKind<E, N, K>) {
    this.#streams = streams;
    this.#orm = orm;
    this.#log = log;
    this.#kind = kind;
  }

  /** The caller's org's changes from now on. */
  open(request: StreamRequest): LiveStream<E> {
    const orgId = request.principal.orgId;
    const stream = this.#streams.openStream<E>(request, {
      keyOf: this.#kind.keyOf,
      merge: this.#kind.merge,
      onClose: () => {
        const current = this.#orgs.get(orgId);
        current?.streams.delete(stream);
        if (current && current.streams.size === 0 && !current.running) this.#orgs.delete(orgId);
      },
    });
    let org = this.#orgs.get(orgId);
    if (!org) this.#orgs.set(orgId, (org = { streams: new Set(), known: null, pending: [], running: false }));
    org.streams.add(stream);
    if (org.known === null) this.#streams.track(this.#drain(orgId, org));
    return stream;
  }

  /** Queues a notice for its org, or for every org with subscribers here when it names none. */
  queue(orgId: number | null, notice: N): void {
    const orgs = orgId !== null ? [[orgId, this.#orgs.get(orgId)] as const] : [...this.#orgs.entries()];
    for (const [id, org] of orgs) {
      if (!org) continue;
      org.pending.push(notice);
      this.#streams.track(this.#drain(id, org));
    }
  }

  async #drain(orgId: number, org: OrgState<E, N, K>): Promise<void> {
    if (org.running) return;
    org.running = true;
    const kind = this.#kind;
    try {
      while (org.streams.size > 0 && (org.known === null || org.pending.length > 0)) {
        const em = this.#orm.em.fork({ clear: true });
        if (org.known === null) {
          org.known = await kind.load(em, orgId);
          continue;
        }
        const batch = org.pending.splice(0);
        for (const event of await kind.read(em, orgId, org.known, batch)) {
          for (const stream of org.streams) {
            if (kind.admits) {
              const admitted = kind.admits(em, stream, event);
              if (!(admitted instanceof Promise ? await admitted : admitted)) continue;
            }
            stream.push(event, () => STREAM_ERRORS.overflow(this.#streams.queueSize));
          }
        }
      }
    } catch (error) {
      this.#log.warn({ err: error, orgId }, `could not read ${kind.what} for subscribers; ending their streams`);
      for (const stream of org.streams) stream.end(STREAM_ERRORS.readFailed());
      org.pending = [];
    } finally {
      org.running = false;
      if (org.streams.size === 0 && this.#orgs.get(orgId) === org) this.#orgs.delete(orgId);
    }
  }
}
