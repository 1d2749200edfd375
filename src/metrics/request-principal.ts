import { AsyncLocalStorage } from 'node:async_hooks';
import type { Authenticator } from '../auth/authenticator.ts';
import type { Principal } from '../auth/principal.ts';
import type { Services } from '../services/index.ts';

/**
 * Who a request authenticated as, for its log line and metrics, where the handler does not hand
 * it back (the GraphQL server authenticates inside its own context factory). The handler runs in
 * `capturePrincipal`, and services from `recordingAuthentication` note each principal they
 * resolve in the capture of the request being served.
 */
const captures = new AsyncLocalStorage<{ principal: Principal | null }>();

export async function capturePrincipal(work: () => unknown): Promise<Principal | null> {
  const capture: { principal: Principal | null } = { principal: null };
  await captures.run(capture, work);
  return capture.principal;
}

/** The same services, except that authentication also records its result in the current capture. */
export function recordingAuthentication(services: Services): Services {
  const authenticator = services.authenticator;
  const authenticate: Authenticator['authenticate'] = async (em, credentials) => {
    const principal = await authenticator.authenticate(em, credentials);
    const capture = captures.getStore();
    if (capture) capture.principal = principal;
    return principal;
  };
  const recording = new Proxy(authenticator, {
    get(target, key) {
      if (key === 'authenticate') return authenticate;
      const value: unknown = Reflect.get(target, key, target);
      // Methods run on the real instance, whose private fields a proxy cannot reach.
      return typeof value === 'function' ? value.bind(target) : value;
    },
  });
  return { ...services, authenticator: recording };
}
