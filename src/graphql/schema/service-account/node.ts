import { orgRole } from '../../../auth/access.ts';
import { type OwnedServiceAccountToken, type ServiceAccountProfile } from '../../../services/service-accounts.ts';
import { builder } from '../../builder.ts';
import { SEES } from '../../graph-access.ts';
import { isRowId, nodeKey } from '../../node-ids.ts';
import { orgById } from '../organization/loaders.ts';
import { loadServiceAccountTokens, serviceAccountById, serviceAccountsOfOrg, tokensOfServiceAccount } from './loaders.ts';
import { connection } from '../connections.ts';
import { ActorInterface } from '../actor.ts';
import { contains, pageIf } from '../connections.ts';
import { OrganizationType } from '../organization/node.ts';

/**
 * A service account and its tokens: their one type each in the graph, and how an org leads to
 * them. Admins of the account's org see them (serviceaccounts:read); an account or token of another
 * org is none.
 */
export const SERVICE_ACCOUNT_ACCESS = {
  read: orgRole('Admin', 'serviceaccounts:read'),
  create: orgRole('Admin', 'serviceaccounts:create'),
  write: orgRole('Admin', 'serviceaccounts:write'),
  delete: orgRole('Admin', 'serviceaccounts:delete'),
};

const iso = (date: Date | string) => new Date(date).toISOString();

export const ServiceAccountType = builder.node(builder.objectRef<ServiceAccountProfile>('ServiceAccount'), {
  description: 'A non-human identity in one org; it authenticates with its tokens. Seen by its org\'s Admins (serviceaccounts:read), and as `viewer` by its own tokens.',
  interfaces: [ActorInterface],
  id: nodeKey((sa) => sa.id),
  loadMany: (keys, ctx) => Promise.all(keys.map((key) => serviceAccountById(ctx).load(Number(key)))),
  fields: (t) => ({
    databaseId: t.exposeInt('id', { description: 'The numeric id REST paths take (`/api/serviceaccounts/:id`).' }),
    name: t.exposeString('name', { description: 'Display name; unique in the org.' }),
    login: t.exposeString('login', { description: '`sa-<orgId>-<name>` as created, lower-cased, spaces as dashes; a rename keeps it.' }),
    orgId: t.exposeInt('orgId', { description: 'The numeric id of the one org the account belongs to (`organization` is the org itself).' }),
    isDisabled: t.exposeBoolean('isDisabled', { description: 'Disabled accounts\' tokens are refused.' }),
    role: t.exposeString('role', { description: 'The account\'s org role, which its tokens act with.' }),
    tokenCount: t.exposeInt('tokens', { description: 'Number of tokens (`tokens` lists them).' }),
    createdAt: t.string({ description: 'When it was created (ISO 8601).', resolve: (sa) => iso(sa.createdAt) }),
    updatedAt: t.string({ description: 'When it was last changed (ISO 8601).', resolve: (sa) => iso(sa.updatedAt) }),
    organization: t.field({
      type: OrganizationType,
      nullable: true,
      description: 'The one org the account belongs to.',
      resolve: (sa, _args, ctx) => orgById(ctx).load(sa.orgId),
    }),
  }),
});

export const ServiceAccountTokenType = builder.node(builder.objectRef<OwnedServiceAccountToken>('ServiceAccountToken'), {
  description: 'A token of a service account (its secret is never shown again). Seen by its org\'s Admins (serviceaccounts:read).',
  id: nodeKey((token) => token.id),
  loadMany: (keys, ctx) => loadServiceAccountTokens(ctx, keys.map(Number)),
  fields: (t) => ({
    databaseId: t.exposeInt('id', { description: 'The numeric id REST paths take (`/api/serviceaccounts/:id/tokens/:tokenId`).' }),
    name: t.exposeString('name', { description: 'Unique in the org.' }),
    created: t.string({ description: 'When the token was created (ISO 8601).', resolve: (k) => iso(k.created) }),
    lastUsedAt: t.string({
      nullable: true,
      description: 'When the token was last used (ISO 8601, refreshed at most every 5 minutes); null if never.',
      resolve: (k) => (k.lastUsedAt ? iso(k.lastUsedAt) : null),
    }),
    expiration: t.string({
      nullable: true,
      description: 'When the token stops working (ISO 8601); null when it never expires.',
      resolve: (k) => (k.expiration ? iso(k.expiration) : null),
    }),
    secondsUntilExpiration: t.float({ description: 'Seconds left when the token expires within the next 7 days; 0 otherwise (and once expired).', resolve: (k) => k.secondsUntilExpiration }),
    hasExpired: t.exposeBoolean('hasExpired', { description: 'Its expiration has passed: it is refused.' }),
    isRevoked: t.exposeBoolean('isRevoked', { description: 'Revoked tokens are refused but still listed.' }),
    serviceAccount: t.field({
      type: ServiceAccountType,
      nullable: true,
      description: 'The account the token authenticates as.',
      resolve: (token, _args, ctx) => serviceAccountById(ctx).load(token.serviceAccountId),
    }),
  }),
});

const ServiceAccountConnection = connection('ServiceAccountConnection', ServiceAccountType, 'service accounts');
const ServiceAccountTokenConnection = connection('ServiceAccountTokenConnection', ServiceAccountTokenType, 'service account tokens');

builder.objectFields(ServiceAccountType, (t) => ({
  tokens: t.connection({
    type: ServiceAccountTokenType,
    nullable: true,
    description: 'Its tokens by name. Its org\'s Admins (serviceaccounts:read); null for anyone else, the account itself included.',
    resolve: (sa, args, ctx) => pageIf(SEES.serviceAccounts(ctx, sa.orgId), 'ServiceAccount.tokens', () => tokensOfServiceAccount(ctx).load(sa.id), args, undefined, ctx.rest),
  }, ServiceAccountTokenConnection),
}));

builder.objectFields(OrganizationType, (t) => ({
  serviceAccounts: t.connection({
    type: ServiceAccountType,
    nullable: true,
    description: 'Its service accounts by name. Its Admins (serviceaccounts:read); null for anyone else.',
    args: { query: t.arg.string({ required: false, description: 'Only accounts whose name or login contains it, in any case.' }) },
    resolve: (org, args, ctx) => pageIf(SEES.serviceAccounts(ctx, org.id), 'Organization.serviceAccounts', () => serviceAccountsOfOrg(ctx).load(org.id), args,
      (sa) => !args.query || contains(sa.name, args.query) || contains(sa.login, args.query)),
  }, ServiceAccountConnection),
  serviceAccount: t.field({
    type: ServiceAccountType,
    nullable: true,
    description: 'One of its service accounts by numeric id (`/api/serviceaccounts/:id`); null when it has none of that id. Its Admins (serviceaccounts:read).',
    extensions: { access: SERVICE_ACCOUNT_ACCESS.read },
    args: { databaseId: t.arg.int({ required: true, description: 'The account\'s numeric id.' }) },
    resolve: async (org, { databaseId }, ctx) => {
      if (!isRowId(databaseId)) return null;
      const account = await serviceAccountById(ctx).load(databaseId);
      return account?.orgId === org.id ? account : null;
    },
  }),
}));

