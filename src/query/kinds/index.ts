import type { QueryKind } from './kind.ts';
import { graphiteKind } from './graphite/index.ts';
import { influxDbKind } from './influxdb/index.ts';
import { lokiKind } from './loki/index.ts';
import { prometheusKind } from './prometheus/index.ts';
import { testDataKind } from './testdata/index.ts';

/**
 * The kinds this server queries, by plugin type id (aliases included). A type absent here answers
 * each of its refIds with an error naming it as not supported (SQL kinds among them).
 */
const KINDS: readonly QueryKind[] = [prometheusKind, testDataKind, lokiKind, influxDbKind, graphiteKind];

const BY_TYPE = new Map<string, QueryKind>(KINDS.flatMap((kind) => kind.types.map((type) => [type, kind] as const)));

export function kindFor(type: string): QueryKind | null {
  return BY_TYPE.get(type) ?? null;
}
