import { createRequire } from 'node:module';

/**
 * The original frontend's frame decoder (`@grafana/data`'s `dataFrameFromJSON`), loaded from its
 * CommonJS build. The package's index pulls in ESM-only dependencies (a markdown parser) that
 * Jest's module system cannot require, so the decoder's own module is loaded by path.
 */
export interface DecodedFrame {
  name?: string;
  refId?: string;
  meta?: Record<string, unknown>;
  fields: Array<{ name: string; type: string; values: unknown[]; labels?: Record<string, string>; config: Record<string, unknown>; nanos?: number[] }>;
  length: number;
}

const load = createRequire(import.meta.url);
export const { dataFrameFromJSON } = load(new URL('../../node_modules/@grafana/data/dist/cjs/dataframe/DataFrameJSON.cjs', import.meta.url).pathname) as {
  dataFrameFromJSON(json: unknown): DecodedFrame;
};
