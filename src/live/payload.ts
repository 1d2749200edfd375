/** How a data source changed, when the notification says so (a trigger may not). */
export type ChangeOperation = 'created' | 'updated' | 'deleted';

/** What a data source notification names: the org when known, and the row by id or uid or both. */
export interface DataSourceNotice {
  orgId: number | null;
  id: number | null;
  uid: string | null;
  op: ChangeOperation | null;
}

const OPERATIONS: Record<string, ChangeOperation> = {
  created: 'created', create: 'created', insert: 'created', inserted: 'created',
  updated: 'updated', update: 'updated',
  deleted: 'deleted', delete: 'deleted',
};

/**
 * Reads a `dashgate_datasource_changed` payload whoever sent it. The service sends
 * `<orgId>:<id>[:<operation>]`; a trigger may send JSON (`{"orgId"|"org_id", "id", "uid",
 * "op"|"operation"|"tg_op"|"action"}`) or `<orgId>:<uid>`. Unknown fields are ignored; null when
 * the payload names no data source at all (then a listener can only reload everything it shows).
 */
export function parseDataSourceNotice(payload: string): DataSourceNotice | null {
  const text = payload.trim();
  if (text.startsWith('{')) {
    let parsed: unknown;
    try {
      parsed = JSON.parse(text);
    } catch {
      return null;
    }
    if (parsed === null || typeof parsed !== 'object' || Array.isArray(parsed)) return null;
    const record = parsed as Record<string, unknown>;
    const notice: DataSourceNotice = {
      orgId: integer(record.orgId ?? record.org_id),
      id: integer(record.id ?? record.datasourceId ?? record.data_source_id),
      uid: typeof record.uid === 'string' && record.uid !== '' ? record.uid : null,
      op: operation(record.op ?? record.operation ?? record.tg_op ?? record.action),
    };
    return notice.id !== null || notice.uid !== null ? notice : null;
  }
  const [org, ref, op] = text.split(':');
  if (ref === undefined || ref === '') return null;
  const id = integer(ref);
  return { orgId: integer(org), id, uid: id === null ? ref : null, op: operation(op) };
}

function integer(value: unknown): number | null {
  const number = typeof value === 'string' && /^\d+$/.test(value) ? Number(value) : value;
  return typeof number === 'number' && Number.isSafeInteger(number) && number > 0 ? number : null;
}

function operation(value: unknown): ChangeOperation | null {
  return typeof value === 'string' ? (OPERATIONS[value.toLowerCase()] ?? null) : null;
}
