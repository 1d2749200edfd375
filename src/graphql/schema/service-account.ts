import { builder } from '../builder.ts';
import { MessageType } from './message.ts';
import { orgRole } from '../../auth/access.ts';
import {
  createServiceAccount, createServiceAccountToken, deleteServiceAccount, deleteServiceAccountToken, getServiceAccount,
  listServiceAccounts, listServiceAccountTokens, setServiceAccountDisabled, type ServiceAccount, type ServiceAccountToken,
} from '../../services/service-accounts.ts';
import { NewApiKeyType } from './api-key.ts';

const ServiceAccountType = builder.objectRef<ServiceAccount>('ServiceAccount').implement({
  description: 'A non-human identity in one org; it authenticates with its tokens.',
  fields: (t) => ({
    id: t.exposeInt('id', { description: 'The account\'s id (a user id).' }),
    name: t.exposeString('name', { description: 'Display name.' }),
    login: t.exposeString('login', { description: '`sa-<orgId>-<name>`, lower-cased, spaces as dashes.' }),
    orgId: t.exposeInt('orgId', { description: 'The one org the account belongs to.' }),
    isDisabled: t.exposeBoolean('isDisabled', { description: 'Disabled accounts\' tokens are refused.' }),
    role: t.exposeString('role', { description: 'The account\'s org role, which its tokens act with.' }),
    tokens: t.exposeInt('tokens', { description: 'Number of tokens.' }),
  }),
});

const ServiceAccountTokenType = builder.objectRef<ServiceAccountToken>('ServiceAccountToken').implement({
  description: 'A token of a service account (its secret is never shown again).',
  fields: (t) => ({
    id: t.exposeInt('id', { description: 'The token\'s id.' }),
    name: t.exposeString('name', { description: 'Unique in the org.' }),
    expiration: t.string({
      nullable: true,
      description: 'When the token stops working (ISO 8601); null when it never expires.',
      resolve: (k) => (k.expiration ? new Date(k.expiration).toISOString() : null),
    }),
    isRevoked: t.exposeBoolean('isRevoked', { description: 'Revoked tokens are refused but still listed.' }),
    lastUsedAt: t.string({
      nullable: true,
      description: 'When the token was last used (ISO 8601, refreshed at most every 5 minutes); null if never.',
      resolve: (k) => (k.lastUsedAt ? new Date(k.lastUsedAt).toISOString() : null),
    }),
  }),
});

const CreateServiceAccountInput = builder.inputType('CreateServiceAccountInput', {
  description: 'A new service account of the caller\'s org.',
  fields: (t) => ({
    name: t.string({ required: true, description: 'Display name; unique in the org.' }),
    role: t.string({ required: false, description: '`Viewer` (default), `Editor` or `Admin`.' }),
    isDisabled: t.boolean({ required: false, description: 'Create it disabled (its tokens refused).' }),
  }),
});

const CreateTokenInput = builder.inputType('CreateServiceAccountTokenInput', {
  description: 'A new token of a service account.',
  fields: (t) => ({
    name: t.string({ required: true, description: 'Unique in the org, up to 190 characters.' }),
    secondsToLive: t.int({ required: false, description: 'Lifetime; 0 or absent never expires.' }),
  }),
});

const ADMIN_ACTION = 'serviceaccounts:write';

const ServiceAccountSearch = builder.objectRef<{ serviceAccounts: ServiceAccount[] }>('ServiceAccountSearch').implement({
  description: 'One page holding every service account of the org.',
  fields: (t) => ({
    totalCount: t.int({ description: 'Number of accounts.', resolve: (r) => r.serviceAccounts.length }),
    serviceAccounts: t.field({ type: [ServiceAccountType], description: 'The accounts, by name.', resolve: (r) => r.serviceAccounts }),
    page: t.int({ description: 'Always 1.', resolve: () => 1 }),
    perPage: t.int({ description: 'The size of the one page.', resolve: (r) => r.serviceAccounts.length }),
  }),
});

builder.queryFields((t) => ({
  serviceAccountSearch: t.field({
    extensions: { access: orgRole('Admin', 'serviceaccounts:read') },
    type: ServiceAccountSearch,
    description: 'The search form of the list, as the REST search endpoint answers it.',
    resolve: async (_root, _args, ctx) => ({ serviceAccounts: await listServiceAccounts(ctx.em, ctx.orgId) }),
  }),
  serviceAccounts: t.field({
    extensions: { access: orgRole('Admin', 'serviceaccounts:read') },
    type: [ServiceAccountType],
    description: 'The caller\'s org\'s service accounts. Org Admins only.',
    resolve: (_root, _args, ctx) => listServiceAccounts(ctx.em, ctx.orgId),
  }),
  serviceAccount: t.field({
    extensions: { access: orgRole('Admin', 'serviceaccounts:read') },
    type: ServiceAccountType,
    description: 'One service account of the caller\'s org. Org Admins only.',
    args: { id: t.arg.int({ required: true, description: 'The account\'s id.' }) },
    resolve: (_root, { id }, ctx) => getServiceAccount(ctx.em, ctx.orgId, id),
  }),
  serviceAccountTokens: t.field({
    extensions: { access: orgRole('Admin', 'serviceaccounts:read') },
    type: [ServiceAccountTokenType],
    description: 'The tokens of a service account, by name. Org Admins only.',
    args: { serviceAccountId: t.arg.int({ required: true, description: 'The account\'s id.' }) },
    resolve: (_root, { serviceAccountId }, ctx) =>
      listServiceAccountTokens(ctx.em, ctx.orgId, serviceAccountId),
  }),
}));

builder.mutationFields((t) => ({
  createServiceAccount: t.field({
    extensions: { access: orgRole('Admin', 'serviceaccounts:create') },
    type: ServiceAccountType,
    description: 'Creates a service account in the caller\'s org. Org Admins only.',
    args: { input: t.arg({ type: CreateServiceAccountInput, required: true, description: 'The account.' }) },
    resolve: (_root, { input }, ctx) => createServiceAccount(ctx.em, ctx.orgId, input),
  }),
  setServiceAccountDisabled: t.field({
    extensions: { access: orgRole('Admin', ADMIN_ACTION) },
    type: ServiceAccountType,
    args: {
      id: t.arg.int({ required: true, description: 'The account\'s id.' }),
      isDisabled: t.arg.boolean({ required: true, description: 'true disables, false enables.' }),
    },
    description: 'Disables (or enables) an account; its tokens fail from the next request on.',
    resolve: (_root, { id, isDisabled }, ctx) => setServiceAccountDisabled(ctx.em, ctx.orgId, id, isDisabled),
  }),
  deleteServiceAccount: t.field({
    extensions: { access: orgRole('Admin', 'serviceaccounts:delete') },
    type: MessageType,
    description: 'Deletes a service account with its tokens; they fail from the next request on. Org Admins only.',
    args: { id: t.arg.int({ required: true, description: 'The account\'s id.' }) },
    resolve: async (_root, { id }, ctx) => {
      await deleteServiceAccount(ctx.em, ctx.orgId, id);
      return { message: 'Service account deleted' };
    },
  }),
  createServiceAccountToken: t.field({
    extensions: { access: orgRole('Admin', ADMIN_ACTION) },
    type: NewApiKeyType,
    args: {
      serviceAccountId: t.arg.int({ required: true, description: 'The account\'s id.' }),
      input: t.arg({ type: CreateTokenInput, required: true, description: 'The token.' }),
    },
    description: 'Creates a `glsa_` token acting as the account; the key is shown this once. Org Admins only.',
    resolve: (_root, { serviceAccountId, input }, ctx) =>
      createServiceAccountToken(ctx.em, ctx.orgId, serviceAccountId, input),
  }),
  deleteServiceAccountToken: t.field({
    extensions: { access: orgRole('Admin', ADMIN_ACTION) },
    type: MessageType,
    description: 'Deletes a token of a service account; it fails from the next request on. Org Admins only.',
    args: {
      serviceAccountId: t.arg.int({ required: true, description: 'The account\'s id.' }),
      tokenId: t.arg.int({ required: true, description: 'The token\'s id.' }),
    },
    resolve: async (_root, { serviceAccountId, tokenId }, ctx) => {
      await deleteServiceAccountToken(ctx.em, ctx.orgId, serviceAccountId, tokenId);
      return { message: 'Service account token deleted' };
    },
  }),
}));
