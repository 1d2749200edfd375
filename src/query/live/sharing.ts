import { createHash } from 'node:crypto';
import type { EntityManager, MikroORM } from '@mikro-orm/postgresql';
import type { ChangeListener } from '../../db/change-listener.ts';
import { queryPrepared, type PreparedStatement } from '../../db/prepared.ts';
import type { Logger } from '../../logging/logger.ts';
import { decodeOutcome, encodeOutcome, type SharedOutcome } from './answer-codec.ts';

/**
 * Live queries shared across instances: however many instances serve viewers of one live query,
 * one of them fetches it at each tick and the others receive its answer through PostgreSQL.
 *
 * Leadership. Every instance's listening connection holds a session advisory lock of its own
 * (ChangeListener.sessionLock), which PostgreSQL frees the moment that connection ends: the
 * process exited, was killed, or lost its connection. At every tick each instance watching a
 * query claims the tick in `live_query_lease` (one statement for every query due at once). The
 * claim goes to the current holder while it holds its lock and claimed the previous tick; to
 * anyone else once the holder's lock is free (tried in shared mode for the statement's length,
 * which fails while the holder's session holds it and never fails because another instance tries
 * at the same moment) or once the holder let a tick pass unclaimed (alive but stuck).
 * A row lock serializes the claims of one tick, and a claim needs a newer tick than the row's, so
 * at most one instance fetches a tick. An instance whose last viewer of a query leaves, or that
 * shuts down, deletes its leases and says so (`<key>:released`): an instance still waiting for
 * that tick's answer claims it at once, so a hand-over misses no tick.
 *
 * Answers. The leader writes its answer (answer-codec.ts) over the row of `live_query_answer`
 * (one row per query: the newest answer only) and notifies `<key>:<tick>` in the same statement,
 * so a notice arrives once the row is visible. Instances hear it on their change listener and
 * read the row; one that falls behind reads the newest answer and skips what it missed, as a
 * slow reader of a stream does. An answer encoded larger than `[live] max_shared_answer_bytes` is
 * replaced by a marker telling the others to run that tick themselves. Rows of queries no longer
 * watched are swept once two refreshes passed (a day at most).
 */

/** The notification channel of shared answers and released leases. */
export const LIVE_QUERY_CHANNEL = 'dashgate_live_query_answers';

/** A live query as the instances share it: its share key (share-key.ts), org and refresh period. */
export interface PeerQuery {
  shareKey: string;
  orgId: number;
  refreshMs: number;
}

/** One tick's outcome as another instance published it. */
export interface SharedAnswer {
  /** The tick (epoch ms). */
  at: number;
  outcome: SharedOutcome;
}

/** What an instance watching a query hears from the others. */
export interface PeerFollower {
  /** The newest tick it has an answer for: older answers are not read. */
  newest(): number;
  answer(answer: SharedAnswer): void;
  /** The leader stopped leading before, perhaps, answering its last tick. */
  released(): void;
}

/** The other instances serving live queries, as LiveQueries sees them. */
export interface LiveQueryPeers {
  /** Claims tick `at` of `query` for this instance: true when it leads (fetches) it. */
  claim(query: PeerQuery, at: number): Promise<boolean>;
  /** Hands the outcome of a tick this instance led to the others. */
  share(query: PeerQuery, at: number, outcome: SharedOutcome): void;
  /** The newest answer of `query` published for a tick at or after `notBefore`, for a new subscriber's first event. */
  latest(query: PeerQuery, notBefore: number): Promise<SharedAnswer | null>;
  /** Hears the answers others publish for `query`, until the returned function is called. */
  follow(query: PeerQuery, follower: PeerFollower): () => void;
  /** This instance no longer watches `query`: its lease, if it holds it, goes to another. */
  release(query: PeerQuery): void;
  /** Releases every lease and waits for the statements under way (shutdown). */
  close(): Promise<void>;
}

export interface SharingOptions {
  /** `[live] max_shared_answer_bytes`. */
  maxAnswerBytes: number;
  now?: () => number;
}

/** How often an instance deletes answers and leases nobody renewed for two refreshes. */
const SWEEP_INTERVAL_MS = 60_000;
/**
 * Longest an answer or a lease is kept without being renewed, whatever the refresh: a query
 * refreshed weekly and no longer watched must not keep its rows for weeks. One swept while still
 * watched costs nothing but a claim inserting its lease again, or a new subscriber's own first run.
 */
const MAX_KEPT_MS = 24 * 60 * 60 * 1000;

const CLAIM: PreparedStatement = {
  name: 'dashgate_live_claim',
  // Sorted, so that two instances claiming the same queries lock their rows in the same order.
  text: `insert into live_query_lease as l (key, holder, tick, refresh_ms)
    select c.key, $4::bigint, c.tick, c.refresh_ms
      from unnest($1::text[], $2::bigint[], $3::bigint[]) as c(key, tick, refresh_ms)
     order by c.key
    on conflict (key) do update set holder = excluded.holder, tick = excluded.tick, refresh_ms = excluded.refresh_ms
     where l.tick < excluded.tick
       and (l.holder = excluded.holder or l.tick < excluded.tick - l.refresh_ms or pg_try_advisory_xact_lock_shared(l.holder))
    returning l.key`,
};

const SHARE: PreparedStatement = {
  name: 'dashgate_live_share',
  text: `with written as (
      insert into live_query_answer as a (key, org_id, tick, expires_at, answer) values ($1, $2, $3, $4, $5)
      on conflict (key) do update set org_id = excluded.org_id, tick = excluded.tick, expires_at = excluded.expires_at, answer = excluded.answer
       where a.tick < excluded.tick
      returning a.key, a.tick
    )
    select pg_notify('${LIVE_QUERY_CHANNEL}', key || ':' || tick) from written`,
};

const READ: PreparedStatement = {
  name: 'dashgate_live_read',
  text: 'select tick, answer from live_query_answer where key = $1 and org_id = $2 and tick >= $3',
};

const RELEASE: PreparedStatement = {
  name: 'dashgate_live_release',
  text: `with released as (delete from live_query_lease where key = any($1::text[]) and holder = $2::bigint returning key)
    select pg_notify('${LIVE_QUERY_CHANNEL}', key || ':released') from released`,
};

const RELEASE_ALL: PreparedStatement = {
  name: 'dashgate_live_release_all',
  text: `with released as (delete from live_query_lease where holder = $1::bigint returning key)
    select pg_notify('${LIVE_QUERY_CHANNEL}', key || ':released') from released`,
};

const SWEEP: PreparedStatement = {
  name: 'dashgate_live_sweep',
  text: `with answers as (delete from live_query_answer where expires_at < $1)
    delete from live_query_lease where tick + least(2 * refresh_ms, ${MAX_KEPT_MS}) < $1`,
};

/** The key of a shared query in PostgreSQL: a digest of its share key (which holds the org). */
export function peerKey(shareKey: string): string {
  return createHash('sha256').update(shareKey).digest('hex').slice(0, 32);
}

interface Claim {
  key: string;
  at: number;
  refreshMs: number;
  resolve(leads: boolean): void;
}

interface Followed {
  orgId: number;
  followers: Set<PeerFollower>;
  /** A read of the row under way, and whether a newer notice came meanwhile. */
  reading: boolean;
  again: boolean;
}

/** LiveQueryPeers through PostgreSQL: the lease and answer tables, notices on the change listener. */
export class LiveQuerySharing implements LiveQueryPeers {
  readonly #em: EntityManager;
  readonly #changes: ChangeListener;
  readonly #log: Logger;
  readonly #options: SharingOptions;
  readonly #now: () => number;
  readonly #followed = new Map<string, Followed>();
  #claims: Claim[] = [];
  #releases = new Set<string>();
  #flush: NodeJS.Immediate | null = null;
  /** Claim statements under way: a release waits for them, or the lease it deletes could be claimed just after. */
  readonly #claiming = new Set<Promise<unknown>>();
  readonly #pending = new Set<Promise<unknown>>();
  /** Keys whose answers were too large to share, each reported once. */
  readonly #tooLarge = new Set<string>();
  readonly #sweep: NodeJS.Timeout;
  #closed = false;

  constructor(orm: MikroORM, changes: ChangeListener, log: Logger, options: SharingOptions) {
    this.#em = orm.em.fork();
    this.#changes = changes;
    this.#log = log;
    this.#options = options;
    this.#now = options.now ?? Date.now;
    changes.subscribe(LIVE_QUERY_CHANNEL, {
      notify: (payload) => this.#heard(payload),
      // Nothing to forget: while not listening every stream ends, and with it what it followed.
      reset: () => undefined,
    });
    this.#sweep = setInterval(() => {
      if (this.#changes.listening) this.#track(this.sweep());
    }, SWEEP_INTERVAL_MS);
    this.#sweep.unref();
  }

  /** Deletes the answers and leases nobody renewed for two refreshes (queries no longer watched anywhere). */
  async sweep(): Promise<void> {
    await queryPrepared(this.#em, SWEEP, [this.#now()]).catch((error: unknown) => {
      this.#log.warn({ err: error }, 'could not sweep the answers of live queries no longer watched');
    });
  }

  claim(query: PeerQuery, at: number): Promise<boolean> {
    return new Promise((resolve) => {
      this.#claims.push({ key: peerKey(query.shareKey), at, refreshMs: query.refreshMs, resolve });
      this.#schedule();
    });
  }

  share(query: PeerQuery, at: number, outcome: SharedOutcome): void {
    const key = peerKey(query.shareKey);
    let answer = encodeOutcome(outcome);
    if (answer.length > this.#options.maxAnswerBytes) {
      if (!this.#tooLarge.has(key)) {
        if (this.#tooLarge.size >= 1000) this.#tooLarge.clear();
        this.#tooLarge.add(key);
        this.#log.warn({ bytes: answer.length, limit: this.#options.maxAnswerBytes }, 'a live query answer is larger than [live] max_shared_answer_bytes: every instance watching it runs it itself');
      }
      answer = encodeOutcome({ kind: 'unshared' });
    }
    const expiresAt = at + Math.min(2 * query.refreshMs, MAX_KEPT_MS);
    this.#track(queryPrepared(this.#em, SHARE, [key, query.orgId, at, expiresAt, answer]).catch((error: unknown) => {
      this.#log.warn({ err: error }, 'could not share a live query answer with the other instances');
    }));
  }

  async latest(query: PeerQuery, notBefore: number): Promise<SharedAnswer | null> {
    return this.#read(peerKey(query.shareKey), query.orgId, notBefore);
  }

  follow(query: PeerQuery, follower: PeerFollower): () => void {
    const key = peerKey(query.shareKey);
    let followed = this.#followed.get(key);
    if (!followed) this.#followed.set(key, (followed = { orgId: query.orgId, followers: new Set(), reading: false, again: false }));
    followed.followers.add(follower);
    return () => {
      const current = this.#followed.get(key);
      if (!current?.followers.delete(follower) || current.followers.size > 0) return;
      this.#followed.delete(key);
    };
  }

  release(query: PeerQuery): void {
    const key = peerKey(query.shareKey);
    // Ticks asked for before the last viewer left and not sent yet: nobody here would run them,
    // and a lease taken for one after the release would hold the others off until it lapsed.
    this.#claims = this.#claims.filter((claim) => {
      if (claim.key !== key) return true;
      claim.resolve(false);
      return false;
    });
    this.#releases.add(key);
    this.#schedule();
  }

  async close(): Promise<void> {
    this.#closed = true;
    clearInterval(this.#sweep);
    this.#runBatch();
    await Promise.allSettled([...this.#claiming]);
    const holder = this.#changes.sessionLock;
    if (holder !== null) {
      this.#track(queryPrepared(this.#em, RELEASE_ALL, [holder]).catch((error: unknown) => {
        this.#log.warn({ err: error }, 'could not release live query leases at shutdown; the other instances take over once this connection ends');
      }));
    }
    while (this.#pending.size > 0) await Promise.allSettled([...this.#pending]);
  }

  /** Claims and releases asked for in one event-loop turn go out together (ticks of many queries meet). */
  #schedule(): void {
    if (this.#flush || this.#closed) {
      if (this.#closed) this.#runBatch();
      return;
    }
    this.#flush = setImmediate(() => {
      this.#flush = null;
      this.#runBatch();
    });
  }

  #runBatch(): void {
    if (this.#flush) clearImmediate(this.#flush);
    this.#flush = null;
    const claims = this.#claims;
    const releases = [...this.#releases];
    this.#claims = [];
    this.#releases.clear();
    const holder = this.#changes.sessionLock;
    // The release goes after the claims already sent, and the claims of this batch after it
    // (asked for since: a query watched again), or a claim could retake the lease just released.
    let released: Promise<void> | null = null;
    if (releases.length > 0 && holder !== null) {
      const after = Promise.allSettled([...this.#claiming]);
      released = after.then(() => queryPrepared(this.#em, RELEASE, [releases, holder])).then(() => undefined, (error: unknown) => {
        this.#log.warn({ err: error }, 'could not release live query leases; the other instances take over once they lapse');
      });
      this.#track(released);
    }
    if (claims.length === 0) return;
    // Without a listening connection there is no lock to lead under: fetch rather than leave viewers without answers.
    if (holder === null || this.#closed) {
      for (const claim of claims) claim.resolve(true);
      return;
    }
    // One claim per key in a statement (a row is claimed once per statement); a second waits for the next.
    const batch = new Map<string, Claim>();
    for (const claim of claims) {
      if (batch.has(claim.key)) this.#claims.push(claim);
      else batch.set(claim.key, claim);
    }
    if (this.#claims.length > 0) this.#schedule();
    const list = [...batch.values()];
    const send = () => queryPrepared<{ key: string }>(this.#em, CLAIM, [list.map((c) => c.key), list.map((c) => c.at), list.map((c) => c.refreshMs), holder]);
    const claimed = released ? released.then(send) : send();
    this.#claiming.add(claimed);
    const done = () => this.#claiming.delete(claimed);
    claimed.then(done, done);
    this.#track(claimed.then(
      (rows) => {
        const led = new Set(rows.map((row) => row.key));
        for (const claim of list) claim.resolve(led.has(claim.key));
      },
      (error: unknown) => {
        // Unknown whether another instance leads: better one call too many than viewers without an answer.
        this.#log.warn({ err: error }, 'could not claim live query ticks; this instance runs them itself');
        for (const claim of list) claim.resolve(true);
      },
    ));
  }

  #heard(payload: string): void {
    const colon = payload.indexOf(':');
    if (colon < 0) return;
    const key = payload.slice(0, colon);
    const followed = this.#followed.get(key);
    if (!followed) return;
    const what = payload.slice(colon + 1);
    if (what === 'released') {
      for (const follower of [...followed.followers]) follower.released();
      return;
    }
    const at = Number(what);
    if (!Number.isSafeInteger(at) || [...followed.followers].every((f) => f.newest() >= at)) return;
    this.#readFor(key, followed);
  }

  /** Reads the newest answer of `key` for its followers; a notice during the read makes it read again after. */
  #readFor(key: string, followed: Followed): void {
    if (followed.reading) {
      followed.again = true;
      return;
    }
    followed.reading = true;
    followed.again = false;
    this.#track(this.#read(key, followed.orgId, 0).then(
      (answer) => {
        if (!answer) return;
        for (const follower of [...followed.followers]) if (follower.newest() < answer.at) follower.answer(answer);
      },
      (error: unknown) => this.#log.warn({ err: error }, 'could not read a live query answer another instance shared'),
    ).finally(() => {
      followed.reading = false;
      if (followed.again && this.#followed.get(key) === followed) this.#readFor(key, followed);
    }));
  }

  async #read(key: string, orgId: number, notBefore: number): Promise<SharedAnswer | null> {
    const [row] = await queryPrepared<{ tick: string; answer: Buffer }>(this.#em, READ, [key, orgId, notBefore]);
    if (!row) return null;
    return { at: Number(row.tick), outcome: decodeOutcome(row.answer) };
  }

  /** Keeps a statement among those `close` waits for (the pool closes after it). */
  #track<T>(promise: Promise<T>): void {
    const settled = promise.then(() => undefined, () => undefined);
    this.#pending.add(settled);
    void settled.finally(() => this.#pending.delete(settled));
  }
}
