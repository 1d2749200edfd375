import type { TestServer } from './server.ts';

let stored = 0;

/**
 * A data source written straight into the table, its secrets sealed as the server seals them:
 * for material a REST write refuses (or may refuse), as a tool or an older version could have
 * stored it. Returns its id and uid.
 */
export async function storeDataSource(
  server: TestServer,
  fields: { type: string; url: string; name?: string; uid?: string; orgId?: number; jsonData?: Record<string, unknown> },
  secrets: Record<string, string> = {},
): Promise<{ id: number; uid: string }> {
  const orgId = fields.orgId ?? 1;
  const uid = fields.uid ?? `stored-${process.pid}-${++stored}`;
  const sealed: Record<string, string> = {};
  for (const [key, value] of Object.entries(secrets)) sealed[key] = server.app.services.dataSources.sealSecret({ orgId, uid }, key, value);
  const [row] = await server.sql<{ id: number }>(
    `insert into data_source (org_id, uid, name, type, access, url, json_data, secure_json_data) values ($1, $2, $3, $4, 'proxy', $5, $6, $7) returning id`,
    [orgId, uid, fields.name ?? uid, fields.type, fields.url, JSON.stringify(fields.jsonData ?? {}), JSON.stringify(sealed)],
  );
  return { id: row!.id, uid };
}
