import type { MikroORM } from '@mikro-orm/postgresql';
import type { ChangeListener } from '../../db/change-listener.ts';
import type { Logger } from '../../logging/logger.ts';
import type { LiveStream } from '../stream.ts';
import { STREAM_ERRORS, type LiveStreams, type StreamRequest } from '../streams.ts';

/** Notified by a trigger (migration 20261124100000) whenever the alert pause switch is written. */
export const ALERTS_PAUSED_CHANNEL = 'dashgate_alerts_paused_changed';

export interface AlertsPausedEvent {
  paused: boolean;
}

/**
 * The `alertsPausedChanged` feed: the server-wide alert pause switch, read once per notice for
 * every subscriber, each told only when the switch differs from what it last got.
 */
export class AlertsPausedFeed {
  readonly #streams: LiveStreams;
  readonly #orm: MikroORM;
  readonly #log: Logger;
  readonly #subscribers = new Set<LiveStream<AlertsPausedEvent>>();
  /** The switch as last delivered to each stream. */
  readonly #lastPaused = new WeakMap<LiveStream<AlertsPausedEvent>, boolean>();
  #read: { running: boolean; again: boolean } = { running: false, again: false };

  constructor(streams: LiveStreams, orm: MikroORM, changes: ChangeListener, log: Logger) {
    this.#streams = streams;
    this.#orm = orm;
    this.#log = log;
    changes.subscribe(ALERTS_PAUSED_CHANNEL, {
      notify: () => this.#readSwitch(),
      // A lost listener ends every stream (LiveStreams hears it on its own channel).
      reset: () => undefined,
    });
  }

  /** The alert pause switch now, then each time it flips. */
  open(request: StreamRequest): LiveStream<AlertsPausedEvent> {
    const stream = this.#streams.openStream<AlertsPausedEvent>(request, {
      keyOf: () => 'paused',
      merge: (_older, newer) => newer,
      onClose: () => this.#subscribers.delete(stream),
    });
    this.#subscribers.add(stream);
    this.#readSwitch();
    return stream;
  }

  /** Reads the switch (one read at a time, so what subscribers see only moves forward). */
  #readSwitch(): void {
    const state = this.#read;
    if (state.running) {
      state.again = true;
      return;
    }
    if (this.#subscribers.size === 0) return;
    state.running = true;
    state.again = false;
    this.#streams.track((async () => {
      try {
        const rows = await this.#orm.em.fork().execute<Array<{ paused: boolean }>>('select paused from alert_pause_state where id = 1');
        const paused = Boolean(rows[0]?.paused);
        for (const stream of this.#subscribers) {
          if (this.#lastPaused.get(stream) === paused) continue;
          this.#lastPaused.set(stream, paused);
          stream.push({ paused }, () => STREAM_ERRORS.overflow(1));
        }
      } catch (error) {
        this.#log.warn({ err: error }, 'could not read the alert pause switch for subscribers; ending their streams');
        for (const stream of this.#subscribers) stream.end(STREAM_ERRORS.readFailed());
      } finally {
        state.running = false;
        if (state.again) this.#readSwitch();
      }
    })());
  }
}
