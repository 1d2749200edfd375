import { Agent, type AgentOptions } from 'node:http';
import { Agent as HttpsAgent, type AgentOptions as HttpsAgentOptions } from 'node:https';
import type { Socket } from 'node:net';
import type { Duplex } from 'node:stream';
import type { TLSSocket } from 'node:tls';
import { HANDSHAKE_TIMEOUT } from './tls.ts';

/** When a pooled socket stops being worth keeping, in `performance.now()` time. */
const IDLE_UNTIL = Symbol('idleUntil');
/** Set once the socket's TCP keep-alive probes are on. */
const PROBING = Symbol('probing');
type PooledSocket = Socket & { [IDLE_UNTIL]?: number; [PROBING]?: true; _httpMessage?: { res?: { headers: Record<string, string | string[] | undefined> } } | null };

/** How often idle sockets are looked over: a quarter of the idle limit, between 50 ms and 1 s. */
export function sweepIntervalMs(idleTimeoutMs: number): number {
  return idleTimeoutMs > 0 ? Math.min(1_000, Math.max(50, Math.floor(idleTimeoutMs / 4))) : 1_000;
}

/**
 * How long a socket just freed may wait in the pool, in ms; null to drop it now; Infinity for no
 * limit. The upstream's `Keep-Alive: timeout=N` hint wins when shorter, less a second so that we
 * close first, as node's own agent does: reusing a socket the server is closing fails the call.
 */
export function idleLimitMs(idleTimeoutMs: number, keepAliveHint: string | string[] | undefined): number | null {
  let limit = idleTimeoutMs > 0 ? idleTimeoutMs : Infinity;
  const hint = typeof keepAliveHint === 'string' ? /^timeout=(\d+)/.exec(keepAliveHint)?.[1] : undefined;
  if (hint !== undefined) {
    const hinted = Number(hint) * 1000 - 1000;
    if (hinted <= 0) return null;
    limit = Math.min(limit, hinted);
  }
  return limit;
}

/**
 * `[dataproxy] idle_conn_timeout_seconds` as Go's IdleConnTimeout: a pooled connection idle that
 * long is closed. Node's agent `timeout` would do it with a timer on every socket, which node
 * re-arms on every read and write of calls in flight too (a few µs per proxied call); here a
 * socket only records when it went idle, and one unref'd interval closes those past their limit.
 * One instance serves both agents (http and https), which hand it every socket they free.
 */
export class IdleSockets {
  readonly #keepAliveMsecs: number;
  readonly #idleTimeoutMs: number;
  readonly #intervalMs: number;
  #timer: NodeJS.Timeout | null = null;

  constructor(idleTimeoutMs: number, keepAliveMsecs: number | undefined) {
    this.#idleTimeoutMs = idleTimeoutMs;
    this.#keepAliveMsecs = keepAliveMsecs || 1000; // node's own default for 0
    this.#intervalMs = sweepIntervalMs(idleTimeoutMs);
  }

  /**
   * The agents' `keepSocketAlive`: what node's own does, with the idle limit instead of a timer,
   * and TCP keep-alive switched on once per socket rather than each time it is freed (node's
   * own sets it again every time: four `setsockopt` calls per proxied call).
   */
  keep(socket: PooledSocket): boolean {
    if (!socket[PROBING]) {
      socket.setKeepAlive(true, this.#keepAliveMsecs);
      socket[PROBING] = true;
    }
    socket.unref();
    const limit = idleLimitMs(this.#idleTimeoutMs, socket._httpMessage?.res?.headers['keep-alive']);
    if (limit === null) return false;
    // Early by up to one sweep, so that no socket outlives its limit.
    socket[IDLE_UNTIL] = performance.now() + Math.max(0, limit - this.#intervalMs);
    return true;
  }

  /** Closes the agents' free sockets past their idle limit, every interval until `stop()`; `agents` may grow and shrink meanwhile. */
  sweep(agents: Iterable<Agent>): void {
    this.stop();
    this.#timer = setInterval(() => {
      for (const agent of agents) closeIdle(agent);
    }, this.#intervalMs);
    this.#timer.unref();
  }

  stop(): void {
    if (this.#timer) clearInterval(this.#timer);
    this.#timer = null;
  }
}

function closeIdle(agent: Agent): void {
  const now = performance.now();
  for (const sockets of Object.values(agent.freeSockets)) {
    // Destroying emits 'close' later, which is when the agent takes the socket out of its lists.
    for (const socket of (sockets ?? []) as PooledSocket[]) if ((socket[IDLE_UNTIL] ?? Infinity) <= now) socket.destroy();
  }
}

export class IdleLimitedAgent extends Agent {
  readonly #idle: IdleSockets;
  constructor(options: AgentOptions, idle: IdleSockets) {
    super(options);
    this.#idle = idle;
  }
  override keepSocketAlive(socket: Socket): boolean {
    return this.#idle.keep(socket);
  }
}

/**
 * The https pool of one set of TLS material. `[dataproxy] tls_handshake_timeout_seconds` as Go's
 * TLSHandshakeTimeout: from the TCP connection to the end of the handshake. Retired when the data
 * sources using its material change: its idle connections close at once, busy ones when their call ends.
 */
export class IdleLimitedHttpsAgent extends HttpsAgent {
  readonly #idle: IdleSockets;
  readonly #handshakeTimeoutMs: number;
  #retired = false;
  constructor(options: HttpsAgentOptions, idle: IdleSockets, handshakeTimeoutMs = 0) {
    super(options);
    this.#idle = idle;
    this.#handshakeTimeoutMs = handshakeTimeoutMs;
  }
  override keepSocketAlive(socket: Socket): boolean {
    return !this.#retired && this.#idle.keep(socket);
  }
  override createConnection(options: Parameters<HttpsAgent['createConnection']>[0], callback?: (err: Error | null, stream: Duplex) => void): Duplex | null | undefined {
    const socket = super.createConnection(options, callback) as TLSSocket | null | undefined;
    const limit = this.#handshakeTimeoutMs;
    if (!socket || limit <= 0) return socket;
    let timer: NodeJS.Timeout | undefined;
    const clear = () => clearTimeout(timer);
    socket.once('connect', () => {
      timer = setTimeout(() => socket.destroy(Object.assign(new Error('TLS handshake timeout'), { code: HANDSHAKE_TIMEOUT })), limit);
    });
    socket.once('secureConnect', clear);
    socket.once('close', clear);
    return socket;
  }
  get retired(): boolean {
    return this.#retired;
  }
  /** No new connection is kept once freed; idle ones close now. */
  retire(): void {
    this.#retired = true;
    for (const sockets of Object.values(this.freeSockets)) for (const socket of sockets ?? []) socket.destroy();
  }
}
