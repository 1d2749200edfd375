/**
 * Request targets (RFC 9112 section 3.2). Clients talking to a proxy, and some that do not, send
 * the absolute form `http://host:port/path?query`; a server must accept it and route it exactly
 * as the origin form `/path?query`. The host in it chooses nothing here (not the org, not the route).
 */
const ABSOLUTE_FORM = /^[a-z][a-z0-9+.-]*:\/\/[^/?#]*/i;

/** `target` in origin form: the absolute form loses its scheme and authority (an empty path is `/`). */
export function originForm(target: string): string {
  if (target.startsWith('/')) return target;
  const authority = ABSOLUTE_FORM.exec(target);
  if (!authority) return target;
  const rest = target.slice(authority[0].length);
  return rest.startsWith('/') ? rest : `/${rest}`;
}

/** The path of an origin-form target, without its query. */
export function pathOf(target: string): string {
  const q = target.indexOf('?');
  return q < 0 ? target : target.slice(0, q);
}
