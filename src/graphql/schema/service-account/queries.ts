import { DEFAULT_SEARCH_PAGE_SIZE, searchServiceAccounts, type ServiceAccountPage } from '../../../services/service-accounts.ts';
import { builder } from '../../builder.ts';
import { SERVICE_ACCOUNT_ACCESS, ServiceAccountType } from './node.ts';

/** The search REST pages its own way (`page` and `perPage`, a total, filters of its own). */

const ServiceAccountSearch = builder.objectRef<ServiceAccountPage>('ServiceAccountSearch').implement({
  description: 'One page of the org\'s service accounts that match a search.',
  fields: (t) => ({
    totalCount: t.exposeInt('totalCount', { description: 'Accounts matching, on every page.' }),
    serviceAccounts: t.field({ type: [ServiceAccountType], description: 'This page\'s accounts, by e-mail then login; empty past the last page.', resolve: (r) => r.serviceAccounts }),
    page: t.exposeInt('page', { description: 'The page, from 1.' }),
    perPage: t.exposeInt('perPage', { description: 'The page size.' }),
  }),
});

builder.queryFields((t) => ({
  serviceAccountSearch: t.field({
    extensions: { access: SERVICE_ACCOUNT_ACCESS.read, restOnly: true },
    type: ServiceAccountSearch,
    description: 'A page of the org\'s service accounts, as `GET /api/serviceaccounts/search` answers it. Org Admins (serviceaccounts:read).',
    args: {
      query: t.arg.string({ required: false, description: 'Matched case-insensitively anywhere in the name, login or e-mail.' }),
      page: t.arg.int({ required: false, description: 'From 1 (the default; below 1 means 1).' }),
      perPage: t.arg.int({ required: false, description: `Page size; absent or 0 or less means ${DEFAULT_SEARCH_PAGE_SIZE}.` }),
      disabled: t.arg.boolean({ required: false, description: 'Only disabled accounts.' }),
      expiredTokens: t.arg.boolean({ required: false, description: 'Only accounts with an expired token.' }),
    },
    resolve: (_root, args, ctx) => searchServiceAccounts(ctx.em, ctx.orgId, args),
  }),
}));
