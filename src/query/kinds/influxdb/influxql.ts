import { formatInterval } from '../../durations.ts';
import { goQuote } from '../../go-text.ts';

/**
 * InfluxQL from the query builder's model, as the original builds it (`pkg/tsdb/influxdb/models`:
 * model_parser.go, query.go, query_part.go), and the macros every query gets (`$timeFilter`,
 * `$interval`, `$__interval`, `$__interval_ms`). Pure.
 */

export interface QueryPart {
  type: string;
  params: string[];
}

export interface InfluxTag {
  key: string;
  value: string;
  operator: string;
  condition: string;
}

export interface InfluxQuery {
  refId: string;
  rawQuery: boolean;
  query: string;
  measurement: string;
  policy: string;
  selects: QueryPart[][];
  tags: InfluxTag[];
  groupBy: QueryPart[];
  alias: string;
  resultFormat: string;
  tz: string;
  limit: string;
  slimit: string;
  orderByTime: string;
  /** Milliseconds, at least 1. */
  intervalMs: number;
}

type Renderer = (part: QueryPart, inner: string) => string;

const field: Renderer = (part) => {
  const param = part.params[0] ?? '';
  if (param === '*') return '*';
  if (param.endsWith('::tag')) return `"${param.slice(0, -5)}"::tag`;
  if (param.endsWith('::field')) return `"${param.slice(0, -7)}"::field`;
  return `"${param}"`;
};

const fn: Renderer = (part, inner) => {
  const params = part.params.map((p) => (part.type === 'time' && p === 'auto' ? '$__interval' : p));
  return `${part.type}(${(inner !== '' ? [inner, ...params] : params).join(', ')})`;
};

const FUNCTIONS = [
  'spread', 'count', 'distinct', 'integral', 'mean', 'median', 'sum', 'mode', 'cumulative_sum', 'non_negative_difference',
  'holt_winters', 'holt_winters_with_fit', 'derivative', 'non_negative_derivative', 'difference', 'moving_average', 'stddev',
  'time', 'fill', 'elapsed', 'bottom', 'first', 'last', 'max', 'min', 'percentile', 'top',
];

const RENDERERS: Record<string, Renderer> = {
  field,
  tag: field,
  ...Object.fromEntries(FUNCTIONS.map((name) => [name, fn])),
  math: (part, inner) => `${inner} ${part.params[0] ?? ''}`,
  alias: (part, inner) => `${inner} AS "${part.params[0] ?? ''}"`,
};

function badModel(message: string): Error {
  return new Error(message);
}

function optString(model: Readonly<Record<string, unknown>>, key: string, fallback: string): string {
  const v = model[key];
  return typeof v === 'string' ? v : fallback;
}

function parsePart(raw: unknown): QueryPart {
  const obj = (raw ?? {}) as { type?: unknown; params?: unknown };
  if (typeof obj.type !== 'string') throw badModel('type is not a string');
  if (!Object.hasOwn(RENDERERS, obj.type)) throw badModel(`missing query definition for ${goQuote(obj.type)}`);
  const params: string[] = [];
  for (const p of Array.isArray(obj.params) ? obj.params : []) {
    if (typeof p === 'string') params.push(p);
    else if (typeof p === 'number' && Number.isInteger(p)) params.push(String(p));
    else throw badModel(`invalid param ${JSON.stringify(p)} in ${obj.type}`);
  }
  return { type: obj.type, params };
}

/** model_parser.go `QueryParse`: missing keys take their defaults, malformed parts are errors. */
export function parseInfluxQuery(refId: string, model: Readonly<Record<string, unknown>>, intervalMs: number): InfluxQuery {
  const tags = (Array.isArray(model.tags) ? model.tags : []).map((raw) => {
    const t = (raw ?? {}) as Record<string, unknown>;
    if (typeof t.key !== 'string') throw badModel('tag key is not a string');
    if (typeof t.value !== 'string') throw badModel('tag value is not a string');
    return {
      key: t.key,
      value: t.value,
      operator: typeof t.operator === 'string' ? t.operator : '',
      condition: typeof t.condition === 'string' ? t.condition : '',
    };
  });
  const selects = (Array.isArray(model.select) ? model.select : []).map((sel) => (Array.isArray(sel) ? sel : []).map(parsePart));
  const groupBy = (Array.isArray(model.groupBy) ? model.groupBy : []).map(parsePart);
  return {
    refId,
    rawQuery: model.rawQuery === true,
    query: optString(model, 'query', ''),
    measurement: optString(model, 'measurement', ''),
    policy: optString(model, 'policy', 'default'),
    selects,
    tags,
    groupBy,
    alias: optString(model, 'alias', ''),
    resultFormat: optString(model, 'resultFormat', ''),
    tz: optString(model, 'tz', ''),
    limit: stringOrNumber(model.limit),
    slimit: stringOrNumber(model.slimit),
    orderByTime: optString(model, 'orderByTime', ''),
    intervalMs: Math.max(1, intervalMs),
  };
}

function stringOrNumber(v: unknown): string {
  // simplejson's MustString: anything but a string reads as empty.
  return typeof v === 'string' ? v : '';
}

const REGEX_VALUE = /^\/.*\/$/;
const ANCHORED_REGEX = /^\/\^(.*)\$\/$/;
const NUMERIC = /^(-?\d+)(\.\d+)?$/;

function removeRegexWrappers(value: string, wrapper: string): string {
  const m = ANCHORED_REGEX.exec(value);
  return m ? wrapper + m[1] + wrapper : value;
}

function quoteValue(value: string): string {
  return `'${value.replaceAll('\\', '\\\\')}'`;
}

function renderTags(tags: readonly InfluxTag[]): string[] {
  return tags.map((tag, i) => {
    const prefix = i > 0 ? `${tag.condition === '' ? 'AND' : tag.condition} ` : '';
    let operator = tag.operator === '' ? (REGEX_VALUE.test(tag.value) ? '=~' : '=') : tag.operator;
    let text: string;
    switch (operator) {
      case '=~':
      case '!~':
        text = tag.value;
        break;
      case '<':
      case '>':
      case '>=':
      case '<=':
        text = removeRegexWrappers(tag.value, "'");
        break;
      case 'Is':
      case 'Is Not': {
        operator = operator === 'Is' ? '=' : '!=';
        const lower = tag.value.toLowerCase();
        if (tag.key.endsWith('::tag')) text = quoteValue(tag.value);
        else if (lower === 'true' || lower === 'false') text = removeRegexWrappers(lower, "'");
        else if (NUMERIC.test(tag.value)) text = removeRegexWrappers(tag.value, "'");
        else text = removeRegexWrappers(quoteValue(tag.value), "'");
        break;
      }
      default:
        text = quoteValue(removeRegexWrappers(tag.value, ''));
    }
    let key = `"${tag.key}"`;
    if (tag.key.endsWith('::tag')) key = `"${tag.key.slice(0, -5)}"::tag`;
    if (tag.key.endsWith('::field')) key = `"${tag.key.slice(0, -7)}"::field`;
    return `${prefix}${key} ${operator} ${text}`;
  });
}

/** `time >= <from>ms and time <= <to>ms`, as query.go renders `$timeFilter`. */
export function timeFilter(range: { from: number; to: number }): string {
  return `time >= ${Math.trunc(range.from)}ms and time <= ${Math.trunc(range.to)}ms`;
}

/** query.go `Build`: the raw text or the builder's query, then the macros. */
export function buildInfluxQL(q: InfluxQuery, range: { from: number; to: number }): string {
  let res: string;
  if (q.rawQuery && q.query !== '') {
    res = q.query;
  } else {
    res = `SELECT ${q.selects.map((parts) => parts.reduce((inner, part) => RENDERERS[part.type](part, inner), '')).join(', ')}`;
    const policy = q.policy === '' || q.policy === 'default' ? '' : `"${q.policy}".`;
    const measurement = REGEX_VALUE.test(q.measurement) ? q.measurement : `"${q.measurement}"`;
    res += ` FROM ${policy}${measurement}`;
    const conditions = renderTags(q.tags);
    res += ' WHERE ';
    if (conditions.length > 0) res += `${conditions.length > 1 ? `(${conditions.join(' ')})` : conditions[0]} AND `;
    res += timeFilter(range);
    q.groupBy.forEach((group, i) => {
      if (i === 0) res += ' GROUP BY';
      res += i > 0 && group.type !== 'fill' ? ', ' : ' ';
      res += RENDERERS[group.type](group, '');
    });
    if (q.orderByTime !== '') res += ` ORDER BY time ${q.orderByTime}`;
    if (q.limit !== '') res += ` limit ${q.limit}`;
    if (q.slimit !== '') res += ` slimit ${q.slimit}`;
    if (q.tz !== '') res += ` tz('${q.tz}')`;
  }
  const intervalText = formatInterval(q.intervalMs);
  return res
    .replaceAll('$timeFilter', timeFilter(range))
    .replaceAll('$interval', intervalText)
    .replaceAll('$__interval_ms', String(Math.trunc(q.intervalMs)))
    .replaceAll('$__interval', intervalText);
}
