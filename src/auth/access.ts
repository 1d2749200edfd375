import { accessDenied, AUTH_ERRORS, permissionDenied, type DomainError } from '../errors/domain.ts';
import { roleAtLeast, type OrgRole } from '../roles.ts';
import type { Principal } from './principal.ts';

/**
 * Who may call an endpoint, as the original server's route table writes it on every line
 * (`reqSignedIn`, `reqOrgAdmin`, `reqGrafanaAdmin`, ...). Route rows and GraphQL root fields
 * declare one; `authorize` is the only place that reads it.
 */
export type Access =
  /** No credentials needed, none read. */
  | { readonly kind: 'anonymous' }
  /** Credentials are read when sent, and each root field of the operation enforces its own rule (`/graphql`). */
  | { readonly kind: 'per-field' }
  /** Any valid credentials, whatever the role in the org. */
  | { readonly kind: 'signed-in' }
  /** At least `role` in the org the request acts in; the 403 names `action` as the original's access control does. */
  | { readonly kind: 'org-role'; readonly role: OrgRole; readonly action: string }
  /**
   * The server-admin permission. Only users hold it and they authenticate with Basic credentials,
   * so tokens (org-scoped) are refused: the spec's "Basic authentication only" for administration.
   */
  | { readonly kind: 'server-admin' };

export const anonymous: Access = { kind: 'anonymous' };
export const signedIn: Access = { kind: 'signed-in' };
export const perField: Access = { kind: 'per-field' };
export const serverAdmin: Access = { kind: 'server-admin' };
export const orgRole = (role: OrgRole, action: string): Access => ({ kind: 'org-role', role, action });

/** Null when `principal` may go ahead under `access`, else the error to answer. Pure. */
export function authorize(principal: Principal | null, access: Access): DomainError | null {
  if (access.kind === 'anonymous' || access.kind === 'per-field') return null;
  if (!principal) return AUTH_ERRORS.unauthorized();
  switch (access.kind) {
    case 'signed-in':
      return null;
    case 'org-role':
      return roleAtLeast(principal.orgRole, access.role) ? null : accessDenied(access.action);
    case 'server-admin':
      return principal.isServerAdmin && principal.method === 'basic' ? null : permissionDenied();
  }
}

/** Whether two rules are the same (a REST row and the root field it runs must agree). */
export function sameAccess(a: Access, b: Access): boolean {
  if (a.kind !== b.kind) return false;
  return a.kind !== 'org-role' || (b.kind === 'org-role' && a.role === b.role && a.action === b.action);
}

/** How a rule reads in the route table, the OpenAPI document and error messages. */
export function describeAccess(access: Access): string {
  switch (access.kind) {
    case 'anonymous':
      return 'anonymous';
    case 'per-field':
      return 'per root field';
    case 'signed-in':
      return 'signed in';
    case 'org-role':
      return `org ${access.role} (${access.action})`;
    case 'server-admin':
      return 'server admin, Basic credentials';
  }
}
