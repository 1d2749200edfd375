import { createClient, listDataSources } from './client.ts';

// node examples/typed-client/src/main.ts [url] [login:password]
const [url = 'http://localhost:3000', credentials = 'admin:admin'] = process.argv.slice(2);
const client = createClient({ url, authorization: `Basic ${btoa(credentials)}` });

for (const ds of await listDataSources(client)) {
  // `ds` is typed: id: string (global), databaseId: number, name: string, jsonData: Record<string, unknown> | null, ...
  console.log(`${ds.databaseId}\t${ds.name}\t${ds.type}\t${ds.url}${ds.isDefault ? '\t(default)' : ''}`);
}
