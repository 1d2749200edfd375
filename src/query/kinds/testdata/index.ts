/**
 * The built-in TestData kind (`grafana-testdata-datasource`, alias `testdata`): generated data with
 * the frames the original's backend builds (`pkg/tsdb/grafana-testdata-datasource/scenarios.go`,
 * `csv_data.go`, `resource_handler.go`). No upstream call. A `seed` key in a query's model makes
 * its random output reproducible; without it the output is random, as the original's.
 */
import { ownMessage } from '../../answer-error.ts';
import type { DataResponse, Field, Frame } from '../../frames/frame.ts';
import { failed, type DataQuery, type KindContext, type QueryKind, type ResourceRequest, type ResourceResponse } from '../kind.ts';
import { csvValuesToField, fnv1Hex, parseGoDuration, parseGoFloat, parseLabels, randomFor, readCsv, type Random } from './support.ts';
import { MESSAGES } from '../../../errors/messages.ts';
import type { Size } from '../../budget.ts';
import { nextSlice, sliceDue } from '../../slices.ts';

const M = MESSAGES.testData;

/** The model keys the scenarios read (`kinds/dataquery`), with the original's defaults. */
interface TestDataModel {
  scenarioId: string;
  alias: string;
  labels: string;
  stringInput: string;
  seriesCount: number;
  startValue: number;
  spread: number;
  noise: number;
  min?: number;
  max?: number;
  dropPercent: number;
  withNil: boolean;
  lines: number;
  levelColumn: boolean;
  csvContent: string;
  errorSource: string;
  csvWave: unknown;
  pulseWave: Record<string, unknown>;
  seed?: number;
}

const num = (value: unknown): number | undefined => (typeof value === 'number' && Number.isFinite(value) ? value : undefined);
const str = (value: unknown): string | undefined => (typeof value === 'string' ? value : undefined);
/** Go's int fields: a JSON number with a fraction fails to decode there and keeps the default. */
const int = (value: unknown): number | undefined => (Number.isInteger(value) ? (value as number) : undefined);

/** Like the original's GetJSONModel: a key of the wrong type keeps its default. */
function readModel(model: Readonly<Record<string, unknown>>, random: Random): TestDataModel {
  return {
    scenarioId: str(model.scenarioId) ?? 'random_walk',
    alias: str(model.alias) ?? '',
    labels: str(model.labels) ?? '',
    stringInput: str(model.stringInput) ?? '',
    seriesCount: int(model.seriesCount) ?? 1,
    startValue: num(model.startValue) ?? random() * 100,
    spread: num(model.spread) ?? 1,
    noise: num(model.noise) ?? 0,
    min: num(model.min),
    max: num(model.max),
    dropPercent: num(model.dropPercent) ?? 0,
    withNil: model.withNil === true,
    lines: int(model.lines) ?? 10,
    levelColumn: model.levelColumn === true,
    csvContent: str(model.csvContent) ?? '',
    errorSource: str(model.errorSource) ?? '',
    csvWave: model.csvWave,
    pulseWave: model.pulseWave !== null && typeof model.pulseWave === 'object' && !Array.isArray(model.pulseWave) ? (model.pulseWave as Record<string, unknown>) : {},
    seed: num(model.seed),
  };
}

/** A scenario answers the queries routed to it; `undefined` for a refId means absent from the results. */
type Handler = (ctx: KindContext, queries: readonly Query[]) => Promise<Map<string, DataResponse>> | Map<string, DataResponse>;

interface Query extends DataQuery {
  settings: TestDataModel;
}

interface Scenario {
  id: string;
  name: string;
  description: string;
  stringInput: string;
  handler: Handler;
}

/** Series names as `frameNameForQuery`: the alias, else `<refId>-series` plus the index after the first. */
const serverNames = [
  'Backend-ops-01', 'Backend-ops-02', 'Backend-ops-03', 'Backend-ops-04', 'Frontend-web-01', 'Frontend-web-02',
  'Frontend-web-03', 'Frontend-web-04', 'MySQL-01', 'MySQL-02', 'MySQL-03', 'MySQL-04', 'Postgres-01', 'Postgres-02',
  'Postgres-03', 'Postgres-04', 'DB-01', 'DB-02', 'SAN-01', 'SAN-02', 'SAN-02', 'SAN-04', 'Kaftka-01', 'Kaftka-02',
  'Kaftka-03', 'Zookeeper-01', 'Zookeeper-02', 'Zookeeper-03', 'Zookeeper-04',
];
const houseLocations = ['Cellar', 'Living room', 'Porch', 'Bedroom', 'Guest room', 'Kitchen', 'Playroom', 'Bathroom', 'Outside', 'Roof', 'Terrace'];

export function seriesName(refId: string, alias: string, index: number): string {
  let name = alias === '' ? `${refId}-series${index > 0 ? index : ''}` : alias;
  if (name === '__server_names' && index < serverNames.length) name = serverNames[index];
  if (name === '__house_locations' && index < houseLocations.length) name = houseLocations[index];
  return name;
}

/** Fails a refId whose frames hold more points than one refId may answer. */
class TooManyPoints extends Error {}

/** Counts points against the context's limit while a scenario builds its frames. */
class PointBudget {
  private used = 0;
  private readonly max: number;
  constructor(max: number) {
    this.max = max;
  }
  /** An empty frame costs one, so a huge `seriesCount` over an empty range stays bounded too. */
  spend(points: number): void {
    this.used += Math.max(1, points);
    if (this.used > this.max) throw new TooManyPoints(MESSAGES.query.tooManyPoints(this.max));
  }
}

/** `RandomWalk`: one series from `from` every `intervalMs` while before `to`, at most 10000 points. */
export function randomWalk(q: Query, index: number, random: Random, budget?: PointBudget): Frame {
  const s = q.settings;
  const times: number[] = [];
  const values: (number | null)[] = [];
  const drop = s.dropPercent / 100;
  let walker = s.startValue;
  let time = Math.trunc(q.range.from);
  const to = Math.trunc(q.range.to);
  for (let i = 0; i < 10000 && time < to; i++) {
    let next = walker + random() * s.noise;
    if (s.min !== undefined && next < s.min) next = walker = s.min;
    if (s.max !== undefined && next > s.max) next = walker = s.max;
    if (!(drop > 0 && random() < drop)) {
      times.push(time);
      values.push(next);
    }
    walker += (random() - 0.5) * s.spread;
    time += q.intervalMs;
    // A zero interval never reaches `to`: the 10000 cap ends it, as in the original.
  }
  budget?.spend(times.length);
  return {
    name: '',
    meta: { type: 'timeseries-multi', custom: { customStat: 10 } },
    fields: [
      { name: 'time', type: 'time.Time', config: { interval: q.intervalMs }, values: times },
      { name: seriesName(q.refId, s.alias, index), type: 'float64', nullable: true, labels: parseLabels(s.labels, index), values },
    ],
  };
}

/** Each query's answer, the event loop given a turn between queries when their slice is used up. */
async function eachQuery(queries: readonly Query[], build: (q: Query) => DataResponse | undefined | Promise<DataResponse | undefined>): Promise<Map<string, DataResponse>> {
  const out = new Map<string, DataResponse>();
  for (const q of queries) {
    const response = await build(q);
    if (response) out.set(q.refId, response);
    if (sliceDue()) await nextSlice();
  }
  return out;
}

function randomWalkScenario(ctx: KindContext, queries: readonly Query[]): Promise<Map<string, DataResponse>> {
  return eachQuery(queries, async (q) => {
    const budget = new PointBudget(ctx.maxPoints);
    const frames: Frame[] = [];
    for (let i = 0; i < q.settings.seriesCount; i++) {
      frames.push(randomWalk(q, i, randomFor(q.settings.seed, i), budget));
      // Up to 10,000 points a series: the event loop gets its turn between series.
      if (sliceDue()) await nextSlice();
    }
    // The original appends to a nil list: no series (seriesCount 0) means no `frames` key.
    return frames.length > 0 ? { frames } : {};
  });
}

/** `randomWalkTable`: one table of Time, Value, Min, Max, Info and an enum State. */
function randomWalkTable(q: Query, budget: PointBudget): Frame {
  const s = q.settings;
  const random = randomFor(s.seed, 0);
  const columns = { time: [] as (number | null)[], value: [] as (number | null)[], min: [] as (number | null)[], max: [] as (number | null)[], info: [] as string[], state: [] as number[] };
  let walker = s.startValue;
  let time = Math.trunc(q.range.from);
  const to = Math.trunc(q.range.to);
  const rows = Math.min(q.maxDataPoints, 10000);
  let state = 0;
  for (let i = 0; i < rows && time < to; i++) {
    const delta = random() - 0.5;
    walker += delta;
    let info = delta > 0 ? 'up' : 'down';
    state = delta > 0 ? 1 : 2;
    if (Math.abs(delta) > 0.4) info += ' fast';
    const vals: (number | null)[] = [walker, walker - (random() * 2.5 + 0.01), walker + (random() * 2.5 + 0.01)];
    if (s.withNil && random() > 0.8) {
      for (let j = 0; j < vals.length; j++) {
        if (random() > 0.2) {
          vals[j] = null;
          state = 0;
        }
      }
    }
    columns.time.push(time);
    columns.value.push(vals[0]);
    columns.min.push(vals[1]);
    columns.max.push(vals[2]);
    columns.info.push(info);
    columns.state.push(state);
    time += q.intervalMs;
  }
  budget.spend(columns.time.length * 5);
  return {
    name: q.refId,
    fields: [
      { name: 'Time', type: 'time.Time', nullable: true, values: columns.time },
      { name: 'Value', type: 'float64', nullable: true, values: columns.value },
      { name: 'Min', type: 'float64', nullable: true, values: columns.min },
      { name: 'Max', type: 'float64', nullable: true, values: columns.max },
      { name: 'Info', type: 'string', nullable: true, values: columns.info },
      { name: 'State', type: 'enum', config: { type: { enum: { text: ['Unknown', 'Up', 'Down'] } } }, values: columns.state },
    ],
  };
}

/** `handleCSVMetricValuesScenario`: `stringInput` values spread evenly over the range. */
function csvMetricValues(_ctx: KindContext, queries: readonly Query[]): Map<string, DataResponse> {
  const out = new Map<string, DataResponse>();
  for (const q of queries) {
    // The original returns at the first empty input, dropping it and every query after it.
    if (q.settings.stringInput.trim() === '') return out;
    const value = csvValuesToField(q.settings.stringInput.replaceAll(' ', '').split(','));
    value.name = seriesName(q.refId, q.settings.alias, 0);
    const count = value.values.length;
    const from = Math.trunc(q.range.from);
    const step = count > 1 ? Math.trunc((Math.trunc(q.range.to) - from) / (count - 1)) : 0;
    const times = Array.from({ length: count }, (_, i) => from + i * step);
    out.set(q.refId, { frames: [{ name: '', fields: [{ name: 'time', type: 'time.Time', values: times }, value] }] });
  }
  return out;
}

/** `predictableSeries`: a wave on absolute time, one point every `stepMs` from `from` truncated to it. */
function predictableSeries(q: Query, stepMs: number, length: number, valueAt: (mod: number) => number | null | undefined): Field[] | string {
  const from = Math.trunc(q.range.from);
  const to = Math.trunc(q.range.to);
  const period = stepMs * length;
  const times: number[] = [];
  const values: (number | null)[] = [];
  let cursor = from - (from % stepMs);
  for (let i = 0; i < 10000 && cursor < to; i++) {
    const value = valueAt(cursor % period);
    if (value === undefined) return M.waveformGap;
    times.push(cursor);
    values.push(value);
    cursor += stepMs;
  }
  return [
    { name: 'time', type: 'time.Time', values: times },
    { name: 'value', type: 'float64', nullable: true, values },
  ];
}

/** `fromStringOrNumber`: a number, `"null"` or `"nan"`. */
function pulseValue(value: unknown): number | null | undefined {
  if (typeof value === 'number') return value;
  if (value === 'null') return null;
  if (value === 'nan') return NaN;
  return undefined;
}

function predictablePulse(ctx: KindContext, queries: readonly Query[]): Promise<Map<string, DataResponse>> {
  return eachQuery(queries, (q) => {
    const wave = q.settings.pulseWave;
    const stepMs = (int(wave.timeStep) ?? 0) * 1000;
    const onCount = int(wave.onCount) ?? 0;
    const offCount = int(wave.offCount) ?? 0;
    const onValue = pulseValue(wave.onValue);
    const offValue = pulseValue(wave.offValue);
    // The original skips the query on a bad value, and panics dividing by a zero step or period.
    if (onValue === undefined || offValue === undefined || stepMs <= 0 || onCount + offCount <= 0) return undefined;
    const fields = predictableSeries(q, stepMs, onCount + offCount, (mod) => (mod % stepMs === 0 && mod >= 0 && mod / stepMs < onCount ? onValue : offValue));
    if (typeof fields === 'string') return undefined;
    fields[1].labels = parseLabels(q.settings.labels, 0);
    new PointBudget(ctx.maxPoints).spend(fields[0].values.length);
    return { frames: [{ name: seriesName(q.refId, q.settings.alias, 0), meta: { type: 'timeseries-multi', typeVersion: [0, 0] }, fields }] };
  });
}

function predictableCsvWave(ctx: KindContext, queries: readonly Query[]): Promise<Map<string, DataResponse>> {
  return eachQuery(queries, async (q) => {
    const waves = Array.isArray(q.settings.csvWave) ? q.settings.csvWave : [];
    const frames: Frame[] = [];
    const budget = new PointBudget(ctx.maxPoints);
    for (const raw of waves) {
      if (sliceDue()) await nextSlice();
      const wave = raw !== null && typeof raw === 'object' ? (raw as Record<string, unknown>) : {};
      const csv = (str(wave.valuesCSV) ?? '').trim().replace(/,+$/, '');
      const values: (number | null)[] = [];
      for (const part of csv.split(',')) {
        const text = part.trim();
        if (text === 'null') values.push(null);
        else if (text === 'nan') values.push(NaN);
        else {
          const value = parseGoFloat(text);
          if (value === undefined) return failed(M.csvWaveValue(text), 'plugin', 400);
          values.push(value);
        }
      }
      const stepMs = (int(wave.timeStep) ?? 0) * 1000;
      if (stepMs <= 0) return failed(M.csvWaveStep, 'plugin', 400);
      const fields = predictableSeries(q, stepMs, values.length, (mod) => (mod % stepMs === 0 && mod >= 0 && mod / stepMs < values.length ? values[mod / stepMs] : undefined));
      if (typeof fields === 'string') return failed(fields, 'plugin', 500);
      fields[1].labels = parseLabels(str(wave.labels) ?? '', 0);
      budget.spend(fields[0].values.length);
      const name = str(wave.name) || seriesName(q.refId, q.settings.alias, 0);
      frames.push({ name, meta: { type: 'timeseries-multi', typeVersion: [0, 0] }, fields });
    }
    return frames.length > 0 ? { frames } : {};
  });
}

function datapointsOutsideRange(_ctx: KindContext, queries: readonly Query[]): Promise<Map<string, DataResponse>> {
  return eachQuery(queries, (q) => ({
    frames: [{
      name: seriesName(q.refId, q.settings.alias, 0),
      fields: [
        { name: 'time', type: 'time.Time', values: [Math.trunc(q.range.from) - 3_600_000] },
        { name: 'value', type: 'float64', values: [10] },
      ],
    }],
  }));
}

function tableStatic(_ctx: KindContext, queries: readonly Query[]): Promise<Map<string, DataResponse>> {
  return eachQuery(queries, (q) => {
    const times: number[] = [];
    let time = Math.trunc(q.range.from);
    for (let i = 0; i < 10 && time < q.range.to; i++, time += q.intervalMs) times.push(time);
    return {
      frames: [{
        name: q.refId,
        fields: [
          { name: 'Time', type: 'time.Time', values: times },
          { name: 'Message', type: 'string', values: times.map(() => 'This is a message') },
          { name: 'Description', type: 'string', values: times.map(() => 'Description') },
          { name: 'Value', type: 'float64', values: times.map(() => 23.1) },
        ],
      }],
    };
  });
}

const LOG_LEVELS = ['emerg', 'emergency', 'alert', 'crit', 'critical', 'warn', 'warning', 'err', 'eror', 'error', 'info', 'notice', 'dbug', 'debug', 'trace', ''];
const CONTAINER_IDS = ['f36a9eaa6d34310686f2b851655212023a216de955cbcc764210cefa71179b1a', '5a354a630364f3742c602f315132e16def594fe68b1e4a195b2fce628e24c97a'];
const HOSTNAMES = ['srv-001', 'srv-002'];
const LOG_REFERER = 'http://localhost:3000/explore?left=%5B%22now-6h%22,%22now%22,%22Prometheus%202.x%22,%7B%7D,%7B%22ui%22:%5Btrue,true,true,%22none%22%5D%7D%5D';

/** Go's `time.Format(time.RFC3339)` in UTC. */
const rfc3339 = (ms: number) => new Date(ms).toISOString().replace(/\.\d{3}Z$/, 'Z');

/** `handleLogsScenario` plus `adjustDataplaneLogsFrame`: newest line first, one every `intervalMs` back from `to`. */
function logs(ctx: KindContext, queries: readonly Query[]): Promise<Map<string, DataResponse>> {
  return eachQuery(queries, (q) => {
    const s = q.settings;
    const random = randomFor(s.seed, 0);
    const pick = (list: readonly string[]) => list[Math.floor(random() * list.length)];
    const lines = Math.min(s.lines, 10000);
    const from = Math.trunc(q.range.from);
    let to = Math.trunc(q.range.to);
    // The original writes the range's end in nanoseconds on every line.
    const nanos = `${BigInt(to) * 1_000_000n}`;
    const labelTypes = s.levelColumn ? { container_id: 'Indexed label', hostname: 'Parsed field', level: 'Metadata' } : { container_id: 'Indexed label', hostname: 'Parsed field' };
    const labels: unknown[] = [];
    const times: number[] = [];
    const bodies: string[] = [];
    const ids: string[] = [];
    const seen = new Map<string, number>();
    for (let i = 0; i < lines && to > from; i++) {
      const level = pick(LOG_LEVELS);
      const lvl = s.levelColumn ? '' : `lvl=${level} `;
      const body = `t=${rfc3339(Math.floor(to / 1000) * 1000)} ${lvl}msg="Request Completed" logger=context userId=1 orgId=1 uname=admin method=GET path=/api/datasources/proxy/152/api/prom/label status=502 remote_addr=[::1] time_ms=1 size=0 referer="${LOG_REFERER}"`;
      const container = pick(CONTAINER_IDS);
      const host = pick(HOSTNAMES);
      const lineLabels = s.levelColumn ? { container_id: container, hostname: host, level } : { container_id: container, hostname: host };
      // `makeIdField`: the time string, the FNV-1 of line and labels, a suffix for repeats.
      const sum = `${nanos}_${fnv1Hex(`${body}_${JSON.stringify(lineLabels)}`)}`;
      const count = seen.get(sum) ?? 0;
      seen.set(sum, count + 1);
      labels.push(lineLabels);
      times.push(to);
      bodies.push(body);
      ids.push(count > 0 ? `${sum}_${count}` : sum);
      to -= q.intervalMs;
      if (q.intervalMs <= 0) break;
    }
    new PointBudget(ctx.maxPoints).spend(times.length * 5);
    return {
      frames: [{
        name: q.refId,
        meta: { type: 'log-lines', preferredVisualisationType: 'logs' },
        fields: [
          { name: 'labels', type: 'json.RawMessage', labels: {}, values: labels },
          { name: 'timestamp', type: 'time.Time', values: times },
          { name: 'body', type: 'string', values: bodies },
          { name: 'id', type: 'string', values: ids },
          { name: 'labelTypes', type: 'json.RawMessage', config: { custom: { hidden: true } }, values: times.map(() => labelTypes) },
        ],
      }],
    };
  });
}

/** `LoadCsvContent`: a header row, then typed columns; `time` columns become times, `{...}` in a name labels. */
export function loadCsvContent(content: string, name: string): Frame {
  let records: string[][];
  try {
    records = readCsv(content);
  } catch (error) {
    throw new Error(M.csvLine(ownMessage(error)));
  }
  if (records.length === 0) throw new Error(M.csvHeader);
  const [header, ...rows] = records;
  const fields: Field[] = [];
  header.forEach((rawName, index) => {
    let fieldName = rawName.replace(/^ +| +$/g, '');
    let field = csvValuesToField(rows.map((row) => row[index].replace(/^ +| +$/g, '')));
    if (fieldName.toLowerCase().includes('time')) field = toTimeField(field) ?? field;
    const brace = fieldName.indexOf('{');
    if (brace >= 0) {
      const labels = parseLabels(fieldName.slice(brace), index);
      if (Object.keys(labels).length > 0) {
        field.labels = labels;
        fieldName = fieldName.slice(0, brace);
      }
    }
    field.name = fieldName;
    fields.push(field);
  });
  return { name, fields };
}

function toTimeField(field: Field): Field | undefined {
  let found = false;
  let values: (number | null)[];
  if (field.type === 'int64' || field.type === 'float64') {
    values = field.values.map((v) => {
      if (v === null) return null;
      found = true;
      return Math.trunc(v as number);
    });
  } else if (field.type === 'string') {
    values = field.values.map((v) => {
      const ms = v === null ? NaN : Date.parse(v as string);
      if (Number.isNaN(ms) || !/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?(Z|[+-]\d\d:\d\d)$/.test(v as string)) return null;
      found = true;
      return ms;
    });
  } else return undefined;
  return found ? { name: field.name, type: 'time.Time', nullable: true, values } : undefined;
}

function csvContent(ctx: KindContext, queries: readonly Query[]): Map<string, DataResponse> {
  const out = new Map<string, DataResponse>();
  for (const q of queries) {
    // The original answers nothing at all, for every query, when one has no content.
    if (q.settings.csvContent === '') return new Map();
    try {
      const frame = loadCsvContent(q.settings.csvContent, q.settings.alias);
      new PointBudget(ctx.maxPoints).spend((frame.fields[0]?.values.length ?? 0) * frame.fields.length);
      out.set(q.refId, { frames: [frame] });
    } catch (error) {
      if (error instanceof TooManyPoints) throw error;
      // The original fails the whole plugin call here; this fails every query of the batch.
      return new Map(queries.map((each) => [each.refId, failed(ownMessage(error), 'plugin', 400)]));
    }
  }
  return out;
}

function abortable(ms: number, signal: AbortSignal): Promise<boolean> {
  return new Promise((resolve) => {
    if (signal.aborted) return resolve(false);
    const done = (completed: boolean) => {
      clearTimeout(timer);
      signal.removeEventListener('abort', onAbort);
      resolve(completed);
    };
    const onAbort = () => done(false);
    const timer = setTimeout(() => done(true), ms);
    signal.addEventListener('abort', onAbort);
  });
}

/** `handleRandomWalkSlowScenario`: sleeps `stringInput` (a Go duration) per query, then a random walk. */
async function slowQuery(ctx: KindContext, queries: readonly Query[]): Promise<Map<string, DataResponse>> {
  const out = new Map<string, DataResponse>();
  for (const q of queries) {
    const ms = parseGoDuration(q.settings.stringInput) ?? 0;
    if (ms > 0 && !(await abortable(ms, ctx.signal))) {
      for (const each of queries) if (!out.has(each.refId)) out.set(each.refId, failed(MESSAGES.query.cancelled, 'downstream', 504));
      return out;
    }
    out.set(q.refId, { frames: [randomWalk(q, 0, randomFor(q.settings.seed, 0), new PointBudget(ctx.maxPoints))] });
  }
  return out;
}

function randomWalkWithError(ctx: KindContext, queries: readonly Query[]): Promise<Map<string, DataResponse>> {
  return eachQuery(queries, (q) => failed(M.randomWalkError, 'plugin', 500, [randomWalk(q, 0, randomFor(q.settings.seed, 0), new PointBudget(ctx.maxPoints))]));
}

function serverError500(ctx: KindContext, queries: readonly Query[]): Map<string, DataResponse> {
  // The original panics when any query has no input; the panic fails the whole call.
  if (queries.some((q) => q.settings.stringInput === '')) return new Map(queries.map((q) => [q.refId, failed(M.panic, 'plugin', 500)]));
  return csvMetricValues(ctx, queries);
}

function errorWithSource(_ctx: KindContext, queries: readonly Query[]): Promise<Map<string, DataResponse>> {
  return eachQuery(queries, (q) => failed('error', q.settings.errorSource === 'downstream' ? 'downstream' : 'plugin', 500));
}

/** Scenarios that only the frontend runs: the backend answers nothing for them. */
const clientSide: Handler = () => new Map();

const PULSE_DESCRIPTION = `Predictable Pulse returns a pulse wave where there is a datapoint every timeStepSeconds.
The wave cycles at timeStepSeconds*(onCount+offCount).
The cycle of the wave is based off of absolute time (from the epoch) which makes it predictable.
Timestamps will line up evenly on timeStepSeconds (For example, 60 seconds means times will all end in :00 seconds).`;

const scenario = (id: string, name: string, handler: Handler, extra: { description?: string; stringInput?: string } = {}): Scenario => ({
  id, name, handler, description: extra.description ?? '', stringInput: extra.stringInput ?? '',
});

/** The scenarios this server runs, as the original registers them (`registerScenarios`). */
export const SCENARIOS: ReadonlyMap<string, Scenario> = new Map([
  scenario('random_walk', 'Random Walk', randomWalkScenario),
  scenario('predictable_pulse', 'Predictable Pulse', predictablePulse, { description: PULSE_DESCRIPTION }),
  scenario('predictable_csv_wave', 'Predictable CSV Wave', predictableCsvWave),
  scenario('random_walk_table', 'Random Walk Table', (ctx, queries) => eachQuery(queries, (q) => ({ frames: [randomWalkTable(q, new PointBudget(ctx.maxPoints))] }))),
  scenario('slow_query', 'Slow Query', slowQuery, { stringInput: '5s' }),
  scenario('no_data_points', 'No Data Points', clientSide),
  scenario('datapoints_outside_range', 'Datapoints Outside Range', datapointsOutsideRange),
  scenario('csv_metric_values', 'CSV Metric Values', csvMetricValues, { stringInput: '1,20,90,30,5,0' }),
  scenario('streaming_client', 'Streaming Client', clientSide),
  scenario('live', 'Grafana Live', clientSide),
  scenario('steps', 'Steps', clientSide),
  scenario('grafana_api', 'Grafana API', clientSide),
  scenario('annotations', 'Annotations', clientSide),
  scenario('table_static', 'Table Static', tableStatic),
  scenario('random_walk_with_error', 'Random Walk (with error)', randomWalkWithError),
  scenario('server_error_500', 'Conditional Error', serverError500, { stringInput: '1,20,90,30,5,0', description: 'Returns an error when the String Input field is empty' }),
  scenario('logs', 'Logs', logs),
  scenario('csv_content', 'CSV Content', csvContent),
  scenario('error_with_source', 'Error with source', errorWithSource),
].map((s) => [s.id, s]));

async function query(ctx: KindContext, queries: readonly DataQuery[]): Promise<Map<string, DataResponse>> {
  // The original routes by queryType when it names a scenario, else by the model's scenarioId.
  const byScenario = new Map<Scenario, Query[]>();
  for (const q of queries) {
    const settings = readModel(q.model, randomFor(num(q.model.seed), -1));
    const chosen = SCENARIOS.get(q.queryType) ?? SCENARIOS.get(settings.scenarioId);
    // An unknown scenario is only logged by the original: its refId is absent from the results.
    if (!chosen) continue;
    const list = byScenario.get(chosen) ?? [];
    list.push({ ...q, settings });
    byScenario.set(chosen, list);
  }
  const results = new Map<string, DataResponse>();
  for (const [chosen, list] of byScenario) {
    let answers: Map<string, DataResponse>;
    try {
      answers = await chosen.handler(ctx, list);
    } catch (error) {
      if (!(error instanceof TooManyPoints)) throw error;
      answers = new Map(list.map((q) => [q.refId, failed(error.message, 'plugin', 400)]));
    }
    for (const [refId, response] of answers) results.set(refId, response);
  }
  return results;
}

/** Rows a walk from the range's start by `stepMs` has before its end, at most `cap` (a step of 0 or less never ends: the cap). */
function stepRows(from: number, to: number, stepMs: number, cap = 10000): number {
  if (!(from < to)) return 0;
  return stepMs > 0 ? Math.min(cap, Math.ceil((to - from) / stepMs)) : cap;
}

/** Series of `rows` rows and `fields` fields each. */
const sized = (series: number, rows: number, fields: number): Size => ({ series, points: series * Math.max(0, rows) * fields });

/**
 * What a query will build, before it is built, from its model as its scenario reads it: an upper
 * bound of its series (frames) and points (rows times fields, as they are counted in the answer).
 */
export function estimate(q: DataQuery): Size {
  const s = readModel(q.model, () => 0);
  const chosen = SCENARIOS.get(q.queryType) ?? SCENARIOS.get(s.scenarioId);
  const from = Math.trunc(q.range.from);
  const to = Math.trunc(q.range.to);
  const walk = stepRows(from, to, q.intervalMs);
  switch (chosen?.id) {
    case 'random_walk':
      return sized(Math.max(0, s.seriesCount), walk, 2);
    case 'slow_query':
    case 'random_walk_with_error':
      return sized(1, walk, 2);
    case 'random_walk_table':
      return sized(1, Math.min(walk, q.maxDataPoints), 6);
    case 'predictable_pulse':
      return sized(1, stepRows(from, to, (int(s.pulseWave.timeStep) ?? 0) * 1000) + 1, 2);
    case 'predictable_csv_wave': {
      const waves = Array.isArray(s.csvWave) ? s.csvWave : [];
      let size: Size = { series: 0, points: 0 };
      for (const wave of waves) {
        const step = wave !== null && typeof wave === 'object' ? (int((wave as Record<string, unknown>).timeStep) ?? 0) * 1000 : 0;
        const one = sized(1, stepRows(from, to, step) + 1, 2);
        size = { series: size.series + one.series, points: size.points + one.points };
      }
      return size;
    }
    case 'csv_metric_values':
    case 'server_error_500':
      return sized(1, s.stringInput.split(',').length, 2);
    case 'csv_content': {
      // Every cell ends at a comma or a line end: no more cells than those plus one.
      let cells = 1;
      for (let i = 0; i < s.csvContent.length; i++) if (s.csvContent[i] === ',' || s.csvContent[i] === '\n') cells++;
      return { series: 1, points: cells };
    }
    case 'logs':
      return sized(1, q.intervalMs > 0 ? stepRows(from, to, q.intervalMs, Math.min(s.lines, 10000)) : Math.min(1, s.lines), 5);
    case 'table_static':
      return sized(1, stepRows(from, to, q.intervalMs, 10), 4);
    case 'datapoints_outside_range':
      return sized(1, 1, 2);
    default:
      return { series: 0, points: 0 };
  }
}

const HELLO = 'Hello world from test datasource!';

/** Header names as Go's `http.CanonicalHeaderKey` writes them. */
const canonical = (name: string) => name.replace(/[^-]+/g, (part) => part[0].toUpperCase() + part.slice(1).toLowerCase());

/** Never echoed: the caller's own credentials. */
const PRIVATE_HEADERS = new Set(['authorization', 'cookie', 'proxy-authorization', 'x-api-key']);

/** `createJSONHandler`: the request as the plugin saw it, keys in Go's map order. */
function echo(request: ResourceRequest): ResourceResponse {
  let body: unknown = null;
  try {
    const parsed: unknown = JSON.parse(request.body.toString('utf8'));
    if (parsed !== null && typeof parsed === 'object' && !Array.isArray(parsed)) body = parsed;
  } catch {
    // The original logs the failure and echoes null.
  }
  const headers: Record<string, string[]> = {};
  for (const name of Object.keys(request.headers).sort((a, b) => (canonical(a) < canonical(b) ? -1 : 1))) {
    const value = request.headers[name];
    if (value === undefined || PRIVATE_HEADERS.has(name.toLowerCase())) continue;
    headers[canonical(name)] = Array.isArray(value) ? value : [value];
  }
  const url = {
    Scheme: '', Opaque: '', User: null, Host: '', Path: `/${request.path}`, RawPath: '', OmitHost: false,
    ForceQuery: false, RawQuery: request.query, Fragment: '', RawFragment: '',
  };
  return json({ message: HELLO, request: { body, headers, method: request.method, url } });
}

const json = (value: unknown): ResourceResponse => ({ status: 200, headers: { 'content-type': 'application/json' }, body: JSON.stringify(value) });

/** `registerRoutes`: Go's mux sends every path it does not know to the hello handler. */
async function resource(_ctx: KindContext, request: ResourceRequest): Promise<ResourceResponse> {
  const path = `/${request.path}`;
  switch (path) {
    case '/scenarios':
      // Go marshals each scenario as a map: keys sorted.
      return json([...SCENARIOS.values()].sort((a, b) => (a.id < b.id ? -1 : 1)).map((s) => ({ description: s.description, id: s.id, name: s.name, stringInput: s.stringInput })));
    case '/test':
    case '/test/json':
      return echo(request);
    case '/stream':
    case '/boom':
    case '/sims':
      return { status: 404, headers: { 'content-type': 'application/json' }, body: JSON.stringify({ message: MESSAGES.http.notFound }) };
    default:
      if (path.startsWith('/sim/')) return { status: 404, headers: { 'content-type': 'application/json' }, body: JSON.stringify({ message: MESSAGES.http.notFound }) };
      if (request.method !== 'GET') return { status: 200, headers: {}, body: '' };
      return { status: 200, headers: { 'content-type': 'text/plain; charset=utf-8' }, body: HELLO };
  }
}

export const testDataKind: QueryKind = {
  types: ['grafana-testdata-datasource', 'testdata'],
  query,
  estimate,
  resource,
};
