import type { RequestContext } from '../../../context.ts';
import { notFound } from '../../../errors/domain.ts';
import { MESSAGES } from '../../../errors/messages.ts';
import {
  createServiceAccount, createServiceAccountToken, deleteServiceAccount, deleteServiceAccountToken, readServiceAccountTokens,
  setServiceAccountDisabled, updateServiceAccount, type OwnedServiceAccountToken, type ServiceAccountProfile,
} from '../../../services/service-accounts.ts';
import { builder } from '../../builder.ts';
import { loadServiceAccountTokens, serviceAccountById } from './loaders.ts';
import { deletePayload, mutate, nodePayload, remove, rowId, UserErrorType, type Payload } from '../payloads.ts';
import { SERVICE_ACCOUNT_ACCESS as ACCESS, ServiceAccountTokenType, ServiceAccountType } from './node.ts';

export const UpdateServiceAccountInput = builder.inputType('UpdateServiceAccountInput', {
  description: 'The fields to change; those left out keep their value.',
  fields: (t) => ({
    name: t.string({ required: false, description: 'New display name (the login stays).' }),
    role: t.string({ required: false, description: '`None` (no permission of its own: only what teams and grants give), `Viewer`, `Editor` or `Admin`; not above the caller\'s own role.' }),
    isDisabled: t.boolean({ required: false, description: 'true refuses its tokens on every instance from the next request on.' }),
  }),
});

export const CreateServiceAccountInput = builder.inputType('CreateServiceAccountInput', {
  description: 'A new service account of the caller\'s org.',
  fields: (t) => ({
    name: t.string({ required: true, description: 'Display name; unique in the org.' }),
    role: t.string({ required: false, description: '`None` (no permission of its own: only what teams and grants give), `Viewer` (default), `Editor` or `Admin`.' }),
    isDisabled: t.boolean({ required: false, description: 'Create it disabled (its tokens refused).' }),
  }),
});

export const CreateTokenInput = builder.inputType('CreateServiceAccountTokenInput', {
  description: 'A new token of a service account.',
  fields: (t) => ({
    name: t.string({ required: true, description: 'Unique in the org, up to 190 characters.' }),
    secondsToLive: t.int({ required: false, description: 'Lifetime; 0 or absent never expires.' }),
  }),
});

/**
 * Mutations of the service accounts of the org the request acts in and of their tokens, as the
 * `/api/serviceaccounts` rows: Admins of that org, each with the row's action. An account or token
 * of another org is not found, as REST answers for an id of another org.
 */
const ServiceAccountPayload = nodePayload('ServiceAccountPayload', 'serviceAccount', ServiceAccountType, 'service account');
const ServiceAccountDeletePayload = deletePayload('ServiceAccountDeletePayload', 'deletedServiceAccountId', 'service account');

type TokenCreated = Payload<{ token: OwnedServiceAccountToken | null; key: string | null; serviceAccount: ServiceAccountProfile | null }>;

const ServiceAccountTokenCreatePayload = builder.objectRef<TokenCreated>('ServiceAccountTokenCreatePayload').implement({
  description: 'The token created with its secret, shown this once, and its account; or why not.',
  fields: (t) => ({
    token: t.field({ type: ServiceAccountTokenType, nullable: true, description: 'The token as the graph reads it; null when `userErrors` says why not.', resolve: (p) => p.token }),
    key: t.string({ nullable: true, description: 'The secret, a `glsa_` token to send as `Authorization: Bearer <key>`: shown this once, only its hash is kept. Null when `userErrors` says why not.', resolve: (p) => p.key }),
    serviceAccount: t.field({ type: ServiceAccountType, nullable: true, description: 'Its account (one token more); null when `userErrors` says why not.', resolve: (p) => p.serviceAccount }),
    userErrors: t.field({ type: [UserErrorType], description: 'Why nothing changed, as REST\'s 4xx answer says; empty on success.', resolve: (p) => p.userErrors }),
  }),
});

type TokenDeleted = Payload<{ deletedServiceAccountTokenId: string | null; serviceAccount: ServiceAccountProfile | null }>;

const ServiceAccountTokenDeletePayload = builder.objectRef<TokenDeleted>('ServiceAccountTokenDeletePayload').implement({
  description: 'The global id of the token deleted and its account, or why not.',
  fields: (t) => ({
    deletedServiceAccountTokenId: t.id({ nullable: true, description: 'Its global id, for clients to evict it from their cache; null when `userErrors` says why not.', resolve: (p) => p.deletedServiceAccountTokenId }),
    serviceAccount: t.field({ type: ServiceAccountType, nullable: true, description: 'Its account (one token less); null when `userErrors` says why not.', resolve: (p) => p.serviceAccount }),
    userErrors: t.field({ type: [UserErrorType], description: 'Why nothing changed, as REST\'s 4xx answer says; empty on success.', resolve: (p) => p.userErrors }),
  }),
});

const idArg = 'The service account\'s global id (`ServiceAccount.id`), in the org the request acts in.';

const readAccount = (ctx: RequestContext, id: number) => serviceAccountById(ctx).load(id);
/** Changes account `id`, then reads it back as the graph does. */
const accountChange = (ctx: RequestContext, id: number, change: () => Promise<unknown>) =>
  mutate(ctx, change, async () => ({ serviceAccount: await readAccount(ctx, id) }), { serviceAccount: null });

builder.mutationFields((t) => ({
  serviceAccountCreate: t.field({
    type: ServiceAccountPayload,
    args: { input: t.arg({ type: CreateServiceAccountInput, required: true, description: 'The account.' }) },
    description: 'Creates a service account in the org the request acts in, as `POST /api/serviceaccounts`. Org Admins (serviceaccounts:create).',
    extensions: { access: ACCESS.create },
    resolve: (_root, { input }, ctx) =>
      mutate(ctx, () => createServiceAccount(ctx.em, ctx.orgId, input), async (sa) => ({ serviceAccount: await readAccount(ctx, sa.id) }), { serviceAccount: null }),
  }),
  serviceAccountUpdate: t.field({
    type: ServiceAccountPayload,
    args: { id: t.arg.id({ required: true, description: idArg }), input: t.arg({ type: UpdateServiceAccountInput, required: true, description: 'What to change.' }) },
    description: 'Renames, re-roles (not above the caller\'s own role), disables or enables a service account, as `PATCH /api/serviceaccounts/:id`. Org Admins (serviceaccounts:write).',
    extensions: { access: ACCESS.write },
    resolve: (_root, { id, input }, ctx) => {
      const accountId = rowId(id, 'ServiceAccount');
      return accountChange(ctx, accountId, () => updateServiceAccount(ctx.em, ctx.orgId, accountId, input, ctx.caller.orgRole));
    },
  }),
  serviceAccountDisable: t.field({
    type: ServiceAccountPayload,
    args: { id: t.arg.id({ required: true, description: idArg }) },
    description: 'Disables a service account: its tokens are refused on every instance from the next request on. Org Admins (serviceaccounts:write).',
    extensions: { access: ACCESS.write },
    resolve: (_root, { id }, ctx) => {
      const accountId = rowId(id, 'ServiceAccount');
      return accountChange(ctx, accountId, () => setServiceAccountDisabled(ctx.em, ctx.orgId, accountId, true));
    },
  }),
  serviceAccountEnable: t.field({
    type: ServiceAccountPayload,
    args: { id: t.arg.id({ required: true, description: idArg }) },
    description: 'Enables a disabled service account again. Org Admins (serviceaccounts:write).',
    extensions: { access: ACCESS.write },
    resolve: (_root, { id }, ctx) => {
      const accountId = rowId(id, 'ServiceAccount');
      return accountChange(ctx, accountId, () => setServiceAccountDisabled(ctx.em, ctx.orgId, accountId, false));
    },
  }),
  serviceAccountDelete: t.field({
    type: ServiceAccountDeletePayload,
    args: { id: t.arg.id({ required: true, description: idArg }) },
    description: 'Deletes a service account with its tokens, as `DELETE /api/serviceaccounts/:id`; they are refused from the next request on. Org Admins (serviceaccounts:delete).',
    extensions: { access: ACCESS.delete },
    resolve: (_root, { id }, ctx) => {
      const accountId = rowId(id, 'ServiceAccount');
      return remove(ctx, 'deletedServiceAccountId', id, () => deleteServiceAccount(ctx.em, ctx.orgId, accountId));
    },
  }),
  serviceAccountTokenCreate: t.field({
    type: ServiceAccountTokenCreatePayload,
    args: {
      serviceAccountId: t.arg.id({ required: true, description: idArg }),
      input: t.arg({ type: CreateTokenInput, required: true, description: 'The token.' }),
    },
    description: 'Creates a `glsa_` token acting as the service account, as `POST /api/serviceaccounts/:id/tokens`; its secret (`key`) is shown this once. Org Admins (serviceaccounts:write).',
    extensions: { access: ACCESS.write },
    resolve: (_root, { serviceAccountId, input }, ctx) => {
      const accountId = rowId(serviceAccountId, 'ServiceAccount');
      return mutate(ctx, () => createServiceAccountToken(ctx.em, ctx.orgId, accountId, input), async (created) => {
        const [[token], serviceAccount] = await Promise.all([loadServiceAccountTokens(ctx, [created.id]), readAccount(ctx, accountId)]);
        return { token: token ?? null, key: created.key, serviceAccount };
      }, { token: null, key: null, serviceAccount: null });
    },
  }),
  serviceAccountTokenDelete: t.field({
    type: ServiceAccountTokenDeletePayload,
    args: {
      id: t.arg.id({ required: true, description: 'The token\'s global id (`ServiceAccountToken.id`), of a service account of the org the request acts in.' }),
      serviceAccountId: t.arg.id({ required: false, description: `When given, the token must be one of this account's (as \`DELETE /api/serviceaccounts/:id/tokens/:tokenId\` checks): ${idArg}` }),
    },
    description: 'Deletes a token of a service account, as `DELETE /api/serviceaccounts/:id/tokens/:tokenId`; it is refused from the next request on. Org Admins (serviceaccounts:write).',
    extensions: { access: ACCESS.write },
    resolve: (_root, { id, serviceAccountId }, ctx) => {
      const tokenId = rowId(id, 'ServiceAccountToken');
      return mutate(ctx, async () => {
        if (serviceAccountId != null) {
          const accountId = rowId(serviceAccountId, 'ServiceAccount');
          await deleteServiceAccountToken(ctx.em, ctx.orgId, accountId, tokenId);
          return accountId;
        }
        // The token's global id alone names its account. Another org's token is none.
        const [token] = await readServiceAccountTokens(ctx.em, { ids: tokenId ? [tokenId] : [] });
        if (!token || token.orgId !== ctx.orgId) throw notFound(MESSAGES.serviceAccount.tokenDeleteFailed);
        await deleteServiceAccountToken(ctx.em, ctx.orgId, token.serviceAccountId, tokenId);
        return token.serviceAccountId;
      }, async (accountId) => ({ deletedServiceAccountTokenId: String(id), serviceAccount: await readAccount(ctx, accountId) }),
      { deletedServiceAccountTokenId: null, serviceAccount: null });
    },
  }),
}));
