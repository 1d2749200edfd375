import { ADMIN } from './server.ts';

export interface SseEvent {
  event: string;
  /** The `data:` lines parsed as JSON (the `complete` event's empty data is null). */
  data: any;
  /** When it arrived (performance.now()). */
  at: number;
}

export interface OpenSubscription {
  status: number;
  headers: Headers;
  /** Every event so far, in order; `:` keep-alive comments are counted in `pings`. */
  events: SseEvent[];
  pings: number;
  /** Resolves when the server ends the response (or the connection drops). */
  ended: Promise<void>;
  /** The next event not yet taken by `next`; rejects after `ms`. */
  next(ms?: number): Promise<SseEvent>;
  /** Resolves with the first event (from the start) matching `match`; rejects after `ms`. */
  waitFor(match: (event: SseEvent) => boolean, ms?: number): Promise<SseEvent>;
  close(): void;
}

/** A GraphQL subscription over Server-Sent Events (graphql-sse distinct connections mode), read raw. */
export async function subscribe(
  server: { url: string },
  query: string,
  options: { auth?: string | null; variables?: Record<string, unknown>; headers?: Record<string, string>; body?: unknown } = {},
): Promise<OpenSubscription> {
  const controller = new AbortController();
  const headers: Record<string, string> = { accept: 'text/event-stream', 'content-type': 'application/json', ...options.headers };
  if (options.auth !== null) headers.authorization = options.auth ?? ADMIN;
  const response = await fetch(`${server.url}/graphql`, {
    method: 'POST',
    headers,
    body: JSON.stringify(options.body ?? { query, variables: options.variables ?? {} }),
    signal: controller.signal,
  });
  const events: SseEvent[] = [];
  const listeners = new Set<() => void>();
  const state = { pings: 0, taken: 0 };
  const ended = (async () => {
    if (!response.body) return;
    const decoder = new TextDecoder();
    const reader = response.body.getReader();
    let buffer = '';
    try {
      for (;;) {
        const { value: chunk, done: finished } = await reader.read();
        if (finished) break;
        buffer += decoder.decode(chunk, { stream: true });
        let boundary: number;
        while ((boundary = buffer.indexOf('\n\n')) >= 0) {
          const block = buffer.slice(0, boundary);
          buffer = buffer.slice(boundary + 2);
          if (block.startsWith(':')) {
            state.pings++;
            continue;
          }
          let event = 'message';
          const data: string[] = [];
          for (const line of block.split('\n')) {
            if (line.startsWith('event:')) event = line.slice(6).trim();
            else if (line.startsWith('data:')) data.push(line.slice(5).trimStart());
          }
          const text = data.join('\n');
          events.push({ event, data: text ? JSON.parse(text) : null, at: performance.now() });
          for (const listener of listeners) listener();
        }
      }
    } catch {
      // aborted by close(), or the connection dropped
    } finally {
      for (const listener of listeners) listener();
    }
  })();
  let done = false;
  void ended.then(() => {
    done = true;
  });

  const waitUntil = <T>(probe: () => T | undefined, ms: number, what: string) =>
    new Promise<T>((resolve, reject) => {
      const check = () => {
        const found = probe();
        if (found !== undefined) {
          finish();
          resolve(found);
        } else if (done) {
          finish();
          reject(new Error(`stream ended before ${what}; events: ${JSON.stringify(events)}`));
        }
      };
      const timer = setTimeout(() => {
        finish();
        reject(new Error(`no ${what} within ${ms} ms; events: ${JSON.stringify(events)}`));
      }, ms);
      const finish = () => {
        clearTimeout(timer);
        listeners.delete(check);
      };
      listeners.add(check);
      check();
    });

  return {
    status: response.status,
    headers: response.headers,
    events,
    get pings() {
      return state.pings;
    },
    ended,
    next: (ms = 5000) => waitUntil(() => (state.taken < events.length ? events[state.taken++] : undefined), ms, 'next event'),
    waitFor: (match, ms = 5000) => waitUntil(() => events.find(match), ms, 'matching event'),
    close: () => controller.abort(),
  };
}

export const DATA_SOURCE_CHANGED = `subscription { dataSourceChanged { kind id: databaseId uid name dataSource { id: databaseId uid name type url isDefault version jsonData secureJsonFields readOnly } } }`;
export const ALERTS_PAUSED_CHANGED = `subscription { alertsPausedChanged { paused } }`;
export const ORG_MEMBERS_CHANGED = `subscription { orgMembersChanged { kind userId login member { orgId userId uid login email name role isDisabled } } }`;
