import type { Route } from './routes.ts';

export interface MatchedRoute<R extends Route = Route> {
  route: R;
  /** Path parameters, percent-decoded. */
  params: Record<string, string>;
}

type Segment = { literal: string } | { param: string };

interface CompiledRoute {
  route: Route;
  segments: Segment[];
  /** Ends in `*`: matches any number of further segments. */
  prefix: boolean;
}

/**
 * Matches `METHOD /path` against the route table. At each position a literal segment beats a
 * parameter, as in the original router (so `/api/datasources/uid/x` never reaches `/:id`), and a
 * route of fixed length beats one ending in `*`. One map lookup by segment count, then a short
 * scan; the table's size does not change the cost for a given path.
 */
export class Router {
  readonly #exact = new Map<number, CompiledRoute[]>();
  /** Routes ending in `*`, longest and most literal first. */
  readonly #prefixes: CompiledRoute[] = [];

  constructor(routes: readonly Route[]) {
    for (const route of routes) {
      const parts = route.path.split('/').filter(Boolean);
      const prefix = parts.at(-1) === '*';
      if (prefix) parts.pop();
      const compiled = { route, prefix, segments: parts.map((s): Segment => (s.startsWith(':') ? { param: s.slice(1) } : { literal: s })) };
      if (prefix) this.#prefixes.push(compiled);
      else {
        const list = this.#exact.get(parts.length) ?? [];
        list.push(compiled);
        this.#exact.set(parts.length, list);
      }
    }
    for (const list of this.#exact.values()) list.sort(bySpecificity);
    this.#prefixes.sort((a, b) => b.segments.length - a.segments.length || bySpecificity(a, b));
  }

  /** `path` is the raw (still percent-encoded) path without query. Null when nothing matches. */
  match(method: string, path: string): MatchedRoute | null {
    const parts = path.split('/').filter(Boolean);
    for (const candidate of this.#exact.get(parts.length) ?? []) {
      const params = matchSegments(candidate, method, parts);
      if (params) return { route: candidate.route, params };
    }
    for (const candidate of this.#prefixes) {
      if (candidate.segments.length > parts.length) continue;
      const params = matchSegments(candidate, method, parts);
      if (params) return { route: candidate.route, params };
    }
    return null;
  }
}

const NO_PARAMS: Readonly<Record<string, string>> = Object.freeze({});

function matchSegments(candidate: CompiledRoute, method: string, parts: string[]): Record<string, string> | null {
  if (candidate.route.method !== method && candidate.route.method !== 'ANY') return null;
  // Made on the first parameter: most candidates fail on a literal before that, and many routes have none.
  let params: Record<string, string> | null = null;
  for (let i = 0; i < candidate.segments.length; i++) {
    const segment = candidate.segments[i]!;
    if ('literal' in segment) {
      if (segment.literal !== parts[i]) return null;
    } else {
      params ??= {};
      try {
        params[segment.param] = decodeURIComponent(parts[i]!);
      } catch {
        return null;
      }
    }
  }
  return params ?? NO_PARAMS;
}

/** Segment by segment, literal before parameter. */
function bySpecificity(a: CompiledRoute, b: CompiledRoute): number {
  const length = Math.min(a.segments.length, b.segments.length);
  for (let i = 0; i < length; i++) {
    const la = 'literal' in a.segments[i]! ? 0 : 1;
    const lb = 'literal' in b.segments[i]! ? 0 : 1;
    if (la !== lb) return la - lb;
  }
  return 0;
}
