import type { RouteSpec } from './routes.ts';

export interface MatchedRoute {
  route: RouteSpec;
  params: Record<string, string>;
}

interface CompiledRoute {
  route: RouteSpec;
  segments: Array<{ param: string } | { literal: string }>;
}

/**
 * Matches `METHOD /path` against the route table. Literal segments beat parameters at the same
 * position, as in the original router, so `/api/datasources/uid/x` never reaches `/:id`.
 */
export class Router {
  readonly #byLength = new Map<number, CompiledRoute[]>();

  constructor(routes: readonly RouteSpec[]) {
    for (const route of routes) {
      const segments = route.path.split('/').filter(Boolean).map((s) => (s.startsWith(':') ? { param: s.slice(1) } : { literal: s }));
      const list = this.#byLength.get(segments.length) ?? [];
      list.push({ route, segments });
      this.#byLength.set(segments.length, list);
    }
    // Most specific first: compare segment by segment, literal before parameter.
    for (const list of this.#byLength.values()) {
      list.sort((a, b) => {
        for (let i = 0; i < a.segments.length; i++) {
          const la = 'literal' in a.segments[i]! ? 0 : 1;
          const lb = 'literal' in b.segments[i]! ? 0 : 1;
          if (la !== lb) return la - lb;
        }
        return 0;
      });
    }
  }

  /** `path` is the raw (still percent-encoded) path without query. Null when nothing matches. */
  match(method: string, path: string): MatchedRoute | null {
    const parts = path.split('/').filter(Boolean);
    const candidates = this.#byLength.get(parts.length);
    if (!candidates) return null;
    for (const candidate of candidates) {
      if (candidate.route.method !== method) continue;
      const params: Record<string, string> = {};
      let ok = true;
      for (let i = 0; i < parts.length && ok; i++) {
        const segment = candidate.segments[i]!;
        if ('literal' in segment) ok = segment.literal === parts[i];
        else {
          try {
            params[segment.param] = decodeURIComponent(parts[i]!);
          } catch {
            ok = false;
          }
        }
      }
      if (ok) return { route: candidate.route, params };
    }
    return null;
  }
}
