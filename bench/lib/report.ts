/**
 * Every number of bench/RESULTS.md is formatted here: scenarios hand back rows of plain numbers
 * (bench/lib/types.ts), one set per run; this module takes each row's median over the runs, judges
 * its target on that median and prints the tables.
 */
import type { BenchRow, Comparison, Goal, LoadFigures, Unit } from './types.ts';

/** The median; the mean of the two middle values for an even count. */
export function medianOf(values: number[]): number {
  if (values.length === 0) return NaN;
  const sorted = [...values].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
}

/** The q-quantile, interpolated between the two nearest values. */
export function quantile(values: number[], q: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  const at = (sorted.length - 1) * q;
  const low = Math.floor(at);
  return sorted[low]! + (sorted[Math.min(low + 1, sorted.length - 1)]! - sorted[low]!) * (at - low);
}

const thousands = (n: number, digits = 0) => n.toLocaleString('en-US', { minimumFractionDigits: digits, maximumFractionDigits: digits });

/** Number formats, for rows and for the free text of notes. */
export const fmt = {
  rps: (n: number) => `${thousands(n)} req/s`,
  /** Three decimals below 1 ms (a proxy adds tenths of a millisecond), fewer above. */
  ms: (n: number) => `${Math.abs(n) < 1 ? n.toFixed(3) : Math.abs(n) < 10 ? n.toFixed(2) : Math.abs(n) < 100 ? n.toFixed(1) : thousands(n)} ms`,
  us: (n: number) => `${Math.abs(n) < 10 ? n.toFixed(1) : thousands(n)} µs`,
  mib: (bytes: number) => `${(bytes / 1024 / 1024).toFixed(1)} MiB`,
  bytes: (n: number) => (n < 1024 * 1024 ? `${(n / 1024).toFixed(1)} KiB` : `${(n / 1024 / 1024).toFixed(1)} MiB`),
  ratio: (n: number) => `${n >= 10 ? n.toFixed(1) : n.toFixed(2)}x`,
};

/** A row's figure in its unit (MiB rows carry bytes). */
export function formatValue(n: number, unit: Unit): string {
  switch (unit) {
    case 'req/s': return fmt.rps(n);
    case 'ms': return fmt.ms(n);
    case 'µs': return fmt.us(n);
    case 'KiB': return `${n.toFixed(1)} KiB`;
    case 'MiB': return fmt.mib(n);
    case 'count': return Number.isInteger(n) ? thousands(n) : n.toFixed(1);
  }
}

/** The figure without its unit, for lists of runs under a headline that has it. */
const bare = (text: string) => text.replace(/ (req\/s|ms|µs|KiB|MiB)$/, '').replace(/x$/, '');

/** A comparison's figure alone: "0.95x", "+0.132 ms", "61%". */
function comparisonFigure(kind: Comparison['kind'], n: number): string {
  if (kind === 'added') return `${n >= 0 ? '+' : ''}${fmt.ms(n)}`;
  if (kind === 'share') return `${Math.round(n * 100)}%`;
  return fmt.ratio(n);
}

/** "server CPU 0.95x MikroORM by hand", "throughput 0.92x ...", "+0.132 ms over the bare pipe". */
function comparisonText(kind: Comparison['kind'], of: string, figure: string): string {
  if (kind === 'throughput') return `throughput ${figure} ${of}`;
  if (kind === 'cpu') return `server CPU ${figure} ${of}`;
  if (kind === 'added') return `${figure} over ${of}`;
  return `${figure} of ${of}`;
}

/** A comparison over the runs: the median of the runs' values, each run's, and every round's. */
export interface ComparisonOverRuns {
  kind: Comparison['kind'];
  of: string;
  value: number;
  /** One per run; undefined where the run had no such row. */
  runs: Array<number | undefined>;
  /** Every round of every run. */
  rounds: number[];
}

/** A row over the runs: the medians, each run's figure, and the verdict on the medians. */
export interface RowOverRuns {
  scenario: string;
  measurement: string;
  unit: Unit;
  value: number;
  runs: Array<number | undefined>;
  /** The text of each run (rows that show text instead of their number). */
  texts: Array<string | undefined>;
  load?: LoadFigures;
  comparisons: ComparisonOverRuns[];
  target?: Goal;
  /** The comparison a `ratio` or `added` target is judged on. */
  decidedBy?: ComparisonOverRuns;
  /** The median of the figure the target is judged on. */
  judged?: number;
  pass?: boolean;
  /** The notes of the run whose judged figure (or value) is nearest the median. */
  notes?: string;
}

function decider(comparisons: ComparisonOverRuns[], target: Goal | undefined): ComparisonOverRuns | undefined {
  if (!target || target.on === 'value') return undefined;
  if (target.on === 'added') return comparisons.find((c) => c.kind === 'added');
  // Server CPU per request is each server's own cost; throughput on two shared cores also carries
  // what the load generator and PostgreSQL took from it (see the header of RESULTS.md).
  return comparisons.find((c) => c.kind === 'cpu') ?? comparisons.find((c) => c.kind === 'throughput');
}

const holds = (n: number, target: Goal) =>
  target.op === '>=' ? n >= target.bound : target.op === '<=' ? n <= target.bound : target.op === '<' ? n < target.bound : n > target.bound;

/** Each row's medians over the runs (`runs[i]` is run i's rows), in the order rows first appeared. */
export function aggregate(runs: BenchRow[][]): RowOverRuns[] {
  const keys: string[] = [];
  const byKey = new Map<string, Array<BenchRow | undefined>>();
  runs.forEach((rows, run) => {
    for (const row of rows) {
      const key = `${row.scenario}\u0000${row.measurement}`;
      if (!byKey.has(key)) {
        keys.push(key);
        byKey.set(key, Array.from({ length: runs.length }, () => undefined));
      }
      const slot = byKey.get(key)!;
      if (slot[run]) throw new Error(`two rows "${row.measurement}" in one run of "${row.scenario}"`);
      slot[run] = row;
    }
  });
  return keys.map((key) => {
    const perRun = byKey.get(key)!;
    const present = perRun.filter((r): r is BenchRow => r !== undefined);
    const first = present[0]!;
    const kinds = [...new Set(present.flatMap((r) => (r.comparisons ?? []).map((c) => c.kind)))];
    const comparisons = kinds.map((kind): ComparisonOverRuns => {
      const each = perRun.map((r) => r?.comparisons?.find((c) => c.kind === kind));
      const values = each.filter((c): c is Comparison => c !== undefined).map((c) => c.value);
      return {
        kind,
        of: each.find((c) => c)!.of,
        value: medianOf(values),
        runs: each.map((c) => c?.value),
        rounds: each.flatMap((c) => c?.rounds ?? []),
      };
    });
    const loads = present.map((r) => r.load).filter((l): l is LoadFigures => l !== undefined);
    const cpus = loads.map((l) => l.cpuMicrosPerRequest).filter((n): n is number => n !== undefined);
    const load = loads.length
      ? {
          requestsPerSecond: medianOf(loads.map((l) => l.requestsPerSecond)),
          latencyP50Ms: medianOf(loads.map((l) => l.latencyP50Ms)),
          latencyP99Ms: medianOf(loads.map((l) => l.latencyP99Ms)),
          cpuMicrosPerRequest: cpus.length ? medianOf(cpus) : undefined,
        }
      : undefined;
    const value = medianOf(present.map((r) => r.value));
    const target = first.target;
    const decidedBy = decider(comparisons, target);
    const judgedRuns = target?.on === 'value' || !target ? perRun.map((r) => r?.value) : (decidedBy?.runs ?? []);
    const judged = !target ? undefined : target.on === 'value' ? value : decidedBy?.value;
    // The run nearest the median of what is judged lends its notes (exactly the median run for an odd count).
    const centre = judged ?? value;
    let nearest = perRun.indexOf(first);
    judgedRuns.forEach((n, run) => {
      if (n !== undefined && Math.abs(n - centre) < Math.abs((judgedRuns[nearest] ?? Infinity) - centre)) nearest = run;
    });
    return {
      scenario: first.scenario,
      measurement: first.measurement,
      unit: first.unit,
      value,
      runs: perRun.map((r) => r?.value),
      texts: perRun.map((r) => r?.text),
      load,
      comparisons,
      target,
      decidedBy,
      judged,
      pass: target ? judged !== undefined && !Number.isNaN(judged) && holds(judged, target) : undefined,
      notes: perRun[nearest]?.notes,
    };
  });
}

export function formatTarget(row: RowOverRuns): string {
  const target = row.target;
  if (!target) return '';
  if (target.label) return target.label;
  if (target.on === 'value') return `${target.op} ${formatValue(target.bound, row.unit)}`;
  if (target.on === 'added') return `${target.op} ${comparisonFigure('added', target.bound)}`;
  return `${row.decidedBy?.kind === 'throughput' ? 'throughput' : 'server CPU'} ${target.op} ${fmt.ratio(target.bound)}`;
}

/** What a missed target reads like in the log. */
export function formatJudged(row: RowOverRuns): string {
  if (row.judged === undefined) return 'no figure';
  return row.target?.on === 'value' ? formatValue(row.judged, row.unit) : comparisonFigure(row.decidedBy!.kind, row.judged);
}

const perRunList = (values: Array<number | undefined>, format: (n: number) => string) => values.map((n) => (n === undefined ? '–' : bare(format(n)))).join(' / ');

/** "server CPU **0.95x** MikroORM by hand (runs 0.93 / 0.95 / 0.97; rounds 0.71–1.20, IQR 0.88–1.02)" */
function comparisonCell(c: ComparisonOverRuns, decides: boolean, runCount: number): string {
  const figure = comparisonFigure(c.kind, c.value);
  const spread: string[] = [];
  if (runCount > 1) spread.push(`runs ${perRunList(c.runs, (n) => comparisonFigure(c.kind, n))}`);
  if (c.rounds.length > 1) {
    const f = (n: number) => bare(comparisonFigure(c.kind, n));
    spread.push(`rounds ${f(Math.min(...c.rounds))}–${f(Math.max(...c.rounds))}, IQR ${f(quantile(c.rounds, 0.25))}–${f(quantile(c.rounds, 0.75))}`);
  }
  return `${comparisonText(c.kind, c.of, decides ? `**${figure}**` : figure)}${spread.length ? ` (${spread.join('; ')})` : ''}`;
}

function loadNote(row: RowOverRuns): string {
  const l = row.load;
  if (!l) return '';
  const parts = [];
  if (row.unit !== 'req/s') parts.push(fmt.rps(l.requestsPerSecond));
  parts.push(`p50 ${fmt.ms(l.latencyP50Ms)}, p99 ${fmt.ms(l.latencyP99Ms)}`);
  if (l.cpuMicrosPerRequest !== undefined) parts.push(`${fmt.us(l.cpuMicrosPerRequest)} server CPU/request`);
  return parts.join('; ');
}

/** One Markdown table per scenario, in the order the scenarios ran. */
export function renderTables(rows: RowOverRuns[], runCount: number): string[] {
  const lines: string[] = [];
  const multi = runCount > 1;
  for (const scenario of [...new Set(rows.map((r) => r.scenario))]) {
    lines.push('', `### ${scenario}`, '');
    lines.push(multi
      ? `| measurement | median of ${runCount} runs | runs | compared with | target | result | notes |`
      : '| measurement | value | compared with | target | result | notes |');
    lines.push(multi ? '|---|---|---|---|---|---|---|' : '|---|---|---|---|---|---|');
    for (const r of rows.filter((x) => x.scenario === scenario)) {
      const texts = r.texts.some((t) => t !== undefined);
      const middle = texts ? (r.texts[r.runs.indexOf(r.value)] ?? r.texts.find((t) => t !== undefined)!) : formatValue(r.value, r.unit);
      const runs = texts ? r.texts.map((t) => t ?? '–').join(' ; ') : perRunList(r.runs, (n) => formatValue(n, r.unit));
      // What decides first, else server CPU before throughput.
      const rank = (c: ComparisonOverRuns) => (c === r.decidedBy ? 0 : c.kind === 'cpu' ? 1 : 2);
      const ordered = [...r.comparisons].sort((a, b) => rank(a) - rank(b));
      const compared = ordered.map((c) => comparisonCell(c, c === r.decidedBy, runCount)).join('<br>');
      const verdict = r.pass === undefined ? '' : r.pass ? 'PASS' : '**FAIL**';
      const notes = [loadNote(r), r.notes].filter(Boolean).join('; ');
      lines.push(`| ${[r.measurement, middle, ...(multi ? [runs] : []), compared, formatTarget(r), verdict, notes].join(' | ')} |`);
    }
  }
  return lines;
}
