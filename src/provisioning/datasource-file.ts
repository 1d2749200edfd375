import { isMap, isScalar, isSeq, LineCounter, parseDocument, type Document, type Node, type YAMLMap } from 'yaml';
import type { Environment } from '../config/env.ts';
import { expandEnv } from './expand.ts';
import { ProvisioningError, where, type DataSourcePlan, type Origin, type ProvisionedDataSource, type ProvisionedDeletion } from './plan.ts';

/** One data source provisioning file's YAML, parsed and checked into a plan (datasources.ts reads the files). */

const DATA_SOURCE_KEYS = new Set([
  'orgId', 'name', 'type', 'access', 'url', 'uid', 'isDefault', 'jsonData', 'secureJsonData', 'editable',
  'user', 'database', 'basicAuth', 'basicAuthUser', 'withCredentials', 'version', 'password', 'basicAuthPassword',
]);
const DELETION_KEYS = new Set(['orgId', 'name']);
const TOP_LEVEL_KEYS = new Set(['apiVersion', 'datasources', 'deleteDatasources', 'prune']);
/** Go's strconv.ParseBool, which the original applies to the (interpolated) text of a boolean. */
const TRUE = new Set(['1', 't', 'T', 'TRUE', 'true', 'True']);
const FALSE = new Set(['0', 'f', 'F', 'FALSE', 'false', 'False']);

/** Parses one file into `plan`. */
export function parseFile(file: string, text: string, env: Environment, plan: DataSourcePlan): void {
  const lines = new LineCounter();
  const doc = parseDocument(text, { lineCounter: lines, prettyErrors: false, uniqueKeys: true });
  const at = (offset: number): Origin => ({ file, ...lines.linePos(offset) });
  const nodeAt = (node: Node | null | undefined, fallback: Origin): Origin => (node?.range ? at(node.range[0]) : fallback);
  const [firstError] = doc.errors;
  if (firstError) throw new ProvisioningError(at(firstError.pos[0]), `invalid YAML: ${firstError.message.split('\n')[0]}`);

  const root = doc.contents;
  if (root === null || (isScalar(root) && root.value === null)) return; // an empty file
  const top = at(0);
  if (!isMap(root)) throw new ProvisioningError(nodeAt(root, top), 'expected a mapping with apiVersion, datasources and deleteDatasources');
  warnUnknown(root, TOP_LEVEL_KEYS, at, plan, '');

  const apiVersion = root.get('apiVersion', true) as Node | undefined;
  if (apiVersion === undefined) plan.warnings.push(`${where(top)}: no apiVersion; reading it as apiVersion 1`);
  else if (integer(apiVersion, env, nodeAt(apiVersion, top), 'apiVersion') !== 1) {
    throw new ProvisioningError(nodeAt(apiVersion, top), 'unsupported apiVersion (only 1 is supported)');
  }

  const pruneNode = root.get('prune', true) as Node | null | undefined;
  const prunable = optionalBoolean(pruneNode, env, nodeAt(pruneNode, top), 'prune') ?? false;

  for (const [index, item] of sequence(root, 'datasources', at, top)) {
    const origin = nodeAt(item, top);
    const label = `datasources[${index}]`;
    if (!isMap(item)) throw new ProvisioningError(origin, `${label} must be a mapping`);
    warnUnknown(item, DATA_SOURCE_KEYS, at, plan, `${label}.`);
    const field = (key: string) => item.get(key, true) as Node | null | undefined;
    const str = (key: string, fallback = '') => optionalString(field(key), env, nodeAt(field(key), origin), `${label}.${key}`) ?? fallback;
    const bool = (key: string, fallback: boolean) => optionalBoolean(field(key), env, nodeAt(field(key), origin), `${label}.${key}`) ?? fallback;
    const int = (key: string, fallback: number) => {
      const node = field(key);
      return node === undefined || node === null || isNull(node) ? fallback : integer(node, env, nodeAt(node, origin), `${label}.${key}`);
    };

    const name = str('name');
    if (!name) throw new ProvisioningError(origin, `${label}: name is required`);
    const type = str('type');
    if (!type) throw new ProvisioningError(origin, `${label} (${name}): type is required`);
    plan.dataSources.push({
      origin,
      orgId: int('orgId', 1),
      name,
      type,
      access: str('access') || 'proxy',
      url: str('url'),
      uid: str('uid') || null,
      isDefault: bool('isDefault', false),
      jsonData: jsonMap(doc, field('jsonData'), env, nodeAt(field('jsonData'), origin), `${label}.jsonData`),
      secureJsonData: secretMap(field('secureJsonData'), env, (node) => nodeAt(node, origin), `${label}.secureJsonData`),
      editable: bool('editable', false),
      user: str('user'),
      database: str('database'),
      basicAuth: bool('basicAuth', false),
      basicAuthUser: str('basicAuthUser'),
      withCredentials: bool('withCredentials', false),
      version: int('version', 0),
      password: str('password'),
      basicAuthPassword: str('basicAuthPassword'),
      prunable,
    });
  }

  for (const [index, item] of sequence(root, 'deleteDatasources', at, top)) {
    const origin = nodeAt(item, top);
    const label = `deleteDatasources[${index}]`;
    if (!isMap(item)) throw new ProvisioningError(origin, `${label} must be a mapping`);
    warnUnknown(item, DELETION_KEYS, at, plan, `${label}.`);
    const nameNode = item.get('name', true) as Node | undefined;
    const name = optionalString(nameNode, env, nodeAt(nameNode, origin), `${label}.name`);
    if (!name) throw new ProvisioningError(origin, `${label}: name is required`);
    const orgNode = item.get('orgId', true) as Node | undefined;
    const orgId = orgNode === undefined || isNull(orgNode) ? 1 : integer(orgNode, env, nodeAt(orgNode, origin), `${label}.orgId`);
    plan.deletions.push({ origin, orgId, name });
  }
}

/** Rules across all files: one declaration per org and name, and at most one default per org. */
export function checkPlan(plan: DataSourcePlan): void {
  const seen = new Map<string, Origin>();
  const defaults = new Map<number, ProvisionedDataSource>();
  for (const ds of plan.dataSources) {
    if (ds.orgId < 1) throw new ProvisioningError(ds.origin, `data source "${ds.name}": orgId must be 1 or more`);
    const key = `${ds.orgId}\u0000${ds.name}`;
    const previous = seen.get(key);
    if (previous) throw new ProvisioningError(ds.origin, `data source "${ds.name}" of org ${ds.orgId} is already declared at ${where(previous)}`);
    seen.set(key, ds.origin);
    if (ds.isDefault) {
      const other = defaults.get(ds.orgId);
      if (other) {
        throw new ProvisioningError(ds.origin, `only one data source per organization can be marked as default (org ${ds.orgId} also has "${other.name}" at ${where(other.origin)})`);
      }
      defaults.set(ds.orgId, ds);
    }
  }
}

type At = (offset: number) => Origin;

function sequence(root: YAMLMap, key: string, at: At, top: Origin): Array<[number, Node | null]> {
  const node = root.get(key, true) as Node | null | undefined;
  if (node === undefined || isNull(node)) return [];
  if (!isSeq(node)) throw new ProvisioningError(node?.range ? at(node.range[0]) : top, `${key} must be a list`);
  return node.items.map((item, index) => [index, item as Node | null]);
}

function warnUnknown(map: YAMLMap, known: Set<string>, at: At, plan: DataSourcePlan, prefix: string): void {
  for (const pair of map.items) {
    const key = isScalar(pair.key) ? String(pair.key.value) : String(pair.key);
    if (!known.has(key)) {
      const node = pair.key as Node | null;
      const origin = node?.range ? at(node.range[0]) : { file: '', line: 0, col: 0 };
      plan.warnings.push(`${where(origin)}: unknown key ${prefix}${key} ignored`);
    }
  }
}

function isNull(node: Node | null | undefined): boolean {
  return node === null || node === undefined || (isScalar(node) && node.value === null);
}

/** The text of a scalar as written (so `1.10` stays `1.10`), with environment references expanded. */
function scalarText(node: Node | null | undefined, env: Environment, origin: Origin, label: string): string | null {
  if (isNull(node)) return null;
  if (!isScalar(node)) throw new ProvisioningError(origin, `${label} must be a single value, not a ${isMap(node) ? 'mapping' : 'list'}`);
  const value = node.value;
  if (typeof value === 'string') return expandEnv(value, env);
  const source = (node as { source?: unknown }).source;
  return typeof source === 'string' && source !== '' ? source : String(value);
}

function optionalString(node: Node | null | undefined, env: Environment, origin: Origin, label: string): string | null {
  return scalarText(node, env, origin, label);
}

function optionalBoolean(node: Node | null | undefined, env: Environment, origin: Origin, label: string): boolean | null {
  const text = scalarText(node, env, origin, label);
  if (text === null) return null;
  if (TRUE.has(text)) return true;
  if (FALSE.has(text)) return false;
  throw new ProvisioningError(origin, `${label} must be true or false, got ${JSON.stringify(text)}`);
}

function integer(node: Node, env: Environment, origin: Origin, label: string): number {
  const text = scalarText(node, env, origin, label) ?? '';
  const number = /^[+-]?\d{1,10}$/.test(text) ? Number(text) : NaN;
  if (!Number.isSafeInteger(number) || Math.abs(number) > 2 ** 31 - 1) throw new ProvisioningError(origin, `${label} must be an integer, got ${JSON.stringify(text)}`);
  return number;
}

function jsonMap(doc: Document, node: Node | null | undefined, env: Environment, origin: Origin, label: string): Record<string, unknown> | null {
  if (isNull(node)) return null;
  if (!isMap(node)) throw new ProvisioningError(origin, `${label} must be a mapping`);
  return expandDeep(node.toJS(doc, { maxAliasCount: 100 }), env) as Record<string, unknown>;
}

function secretMap(node: Node | null | undefined, env: Environment, originOf: (node: Node | null | undefined) => Origin, label: string): Record<string, string> {
  if (isNull(node)) return {};
  if (!isMap(node)) throw new ProvisioningError(originOf(node), `${label} must be a mapping`);
  const secrets: Record<string, string> = {};
  for (const pair of node.items) {
    const key = isScalar(pair.key) ? String(pair.key.value) : String(pair.key);
    const value = pair.value as Node | null;
    secrets[key] = scalarText(value, env, originOf(value ?? (pair.key as Node)), `${label}.${key}`) ?? '';
  }
  return secrets;
}

function expandDeep(value: unknown, env: Environment): unknown {
  if (typeof value === 'string') return expandEnv(value, env);
  if (Array.isArray(value)) return value.map((v) => expandDeep(v, env));
  if (value !== null && typeof value === 'object') {
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, expandDeep(v, env)]));
  }
  return value;
}
