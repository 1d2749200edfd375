// Compile-time only: each @ts-expect-error below must stay an error, which proves the generated
// types are real (were they `any`, `tsc` would report the directive as unused).
import { createClient, CreateDataSourceMutation, DataSourcesQuery, listDataSources, OrganizationMembersQuery, whoAmI } from './client.ts';

export async function typeChecks(): Promise<void> {
  const client = createClient({ url: 'http://localhost:3000', authorization: 'Bearer token' });

  const [first] = await listDataSources(client);
  const id: string | undefined = first?.id;
  // @ts-expect-error: `id` is the global id, a string; the numeric one is `databaseId`
  const databaseId: string | undefined = first?.databaseId;
  // @ts-expect-error: `name` is a string, not a number
  const name: number | undefined = first?.name;
  // @ts-expect-error: the query did not select `secureJsonFields`
  void first?.secureJsonFields;

  // @ts-expect-error: this operation declares `$input`, so variables are required
  await client(CreateDataSourceMutation);
  // @ts-expect-error: `type` and `access` are required in CreateDataSourceInput
  await client(CreateDataSourceMutation, { input: { name: 'x' } });
  const created = await client(CreateDataSourceMutation, { input: { name: 'x', type: 'prometheus', access: 'proxy' } });
  // @ts-expect-error: the node is null when `userErrors` says why nothing was created
  const unchecked: string = created.dataSourceCreate.dataSource.uid;
  const uid: string | undefined = created.dataSourceCreate.dataSource?.uid;

  // @ts-expect-error: `id` is no variable of this operation (it pages with `first` and `after`)
  await client(DataSourcesQuery, { id: 1 });
  const me = await whoAmI(client);
  // @ts-expect-error: a legacy API key has no viewer, so `whoAmI` may answer null
  const orgId: number | null = me.orgId;
  // @ts-expect-error: `orgId` is required by this operation
  await client(OrganizationMembersQuery, {});
  void [id, databaseId, name, unchecked, uid, orgId];
}
