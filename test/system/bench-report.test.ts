import { aggregate, medianOf, quantile, renderTables } from '../../bench/lib/report.ts';
import type { BenchRow, Comparison } from '../../bench/lib/types.ts';

const scenario = 'reads';
const ratios = (throughput: number[], cpu?: number[]): Comparison[] => [
  { kind: 'throughput', of: 'baseline', value: medianOf(throughput), rounds: throughput },
  ...(cpu ? [{ kind: 'cpu' as const, of: 'baseline', value: medianOf(cpu), rounds: cpu }] : []),
];
const restRow = (rps: number, throughput: number[], cpu?: number[], notes?: string): BenchRow => ({
  scenario,
  measurement: 'REST',
  value: rps,
  unit: 'req/s',
  load: { requestsPerSecond: rps, latencyP50Ms: 2, latencyP99Ms: 6, cpuMicrosPerRequest: 300 },
  comparisons: ratios(throughput, cpu),
  target: { on: 'ratio', op: '>=', bound: 0.9 },
  notes,
});

describe('bench report: medians over runs', () => {
  test('medians and quantiles', () => {
    expect(medianOf([3, 1, 2])).toBe(2);
    expect(medianOf([4, 1, 2, 3])).toBe(2.5);
    expect(quantile([1, 2, 3, 4, 5], 0.25)).toBe(2);
    expect(quantile([1, 2], 0.75)).toBe(1.75);
  });

  test('a ratio target is judged on the median of the runs, by server CPU when the row has it', () => {
    const [row] = aggregate([
      [restRow(3000, [0.7, 0.8], [0.84, 0.86], 'run 1')],
      [restRow(3100, [0.8, 0.7], [0.95, 0.97], 'run 2')],
      [restRow(2900, [0.75, 0.75], [0.92, 0.90], 'run 3')],
    ]);
    expect(row!.value).toBe(3000);
    expect(row!.runs).toEqual([3000, 3100, 2900]);
    expect(row!.decidedBy!.kind).toBe('cpu');
    // Per-run CPU medians 0.85, 0.96, 0.91: the middle one decides, though run 1 alone misses.
    expect(row!.judged).toBeCloseTo(0.91);
    expect(row!.pass).toBe(true);
    expect(row!.notes).toBe('run 3');
    expect(row!.decidedBy!.rounds).toEqual([0.84, 0.86, 0.95, 0.97, 0.92, 0.9]);
  });

  test('without server CPU, throughput decides', () => {
    const [row] = aggregate([[restRow(3000, [0.85, 0.87])], [restRow(3000, [0.86, 0.88])], [restRow(3000, [0.95, 0.99])]]);
    expect(row!.decidedBy!.kind).toBe('throughput');
    expect(row!.judged).toBeCloseTo(0.87);
    expect(row!.pass).toBe(false);
  });

  test('value and added-time targets, and a run without the row', () => {
    const startRow = (ms: number): BenchRow => ({ scenario: 'start', measurement: 'fresh start', value: ms, unit: 'ms', target: { on: 'value', op: '<=', bound: 2000, label: '<= 2 s' } });
    const proxyRow = (added: number[]): BenchRow => ({
      scenario: 'proxy',
      measurement: 'dashgate, 1 connection',
      value: 0.4,
      unit: 'ms',
      comparisons: [{ kind: 'added', of: 'the bare pipe', value: medianOf(added), rounds: added }],
      target: { on: 'added', op: '<=', bound: 0.2 },
    });
    const rows = aggregate([[startRow(2100), proxyRow([0.25, 0.21])], [proxyRow([0.18, 0.19])], [startRow(1900), proxyRow([0.15, 0.2])]]);
    const start = rows.find((r) => r.measurement === 'fresh start')!;
    expect(start.runs).toEqual([2100, undefined, 1900]);
    expect(start.value).toBe(2000);
    expect(start.pass).toBe(true);
    const proxy = rows.find((r) => r.scenario === 'proxy')!;
    expect(proxy.judged).toBeCloseTo(0.185);
    expect(proxy.pass).toBe(true);

    const table = renderTables(rows, 3).join('\n');
    expect(table).toContain('| fresh start | 2,000 ms | 2,100 / – / 1,900 |  | <= 2 s | PASS |');
    expect(table).toContain('**+0.185 ms** over the bare pipe (runs +0.230 / +0.185 / +0.175; rounds +0.150–+0.250, IQR +0.182–+0.207)');
    expect(table).toContain('| <= +0.200 ms | PASS |');
  });

  test('the table shows each ratio, the deciding one first and in bold, with its spread', () => {
    const rows = aggregate([[restRow(3000, [0.7, 0.8], [0.84, 0.86])], [restRow(3100, [0.8, 0.7], [0.95, 0.97])], [restRow(2900, [0.75, 0.75], [0.92, 0.9])]]);
    const line = renderTables(rows, 3).find((l) => l.startsWith('| REST'))!;
    expect(line).toBe(
      '| REST | 3,000 req/s | 3,000 / 3,100 / 2,900 | server CPU **0.91x** baseline (runs 0.85 / 0.96 / 0.91; rounds 0.84–0.97, IQR 0.87–0.94)'
      + '<br>throughput 0.75x baseline (runs 0.75 / 0.75 / 0.75; rounds 0.70–0.80, IQR 0.71–0.79) | server CPU >= 0.90x | PASS | p50 2.00 ms, p99 6.00 ms; 300 µs server CPU/request |',
    );
    // One run: no runs column, no per-run lists.
    const single = renderTables(aggregate([[restRow(3000, [0.7, 0.8], [0.84, 0.86])]]), 1);
    expect(single).toContain('| measurement | value | compared with | target | result | notes |');
    expect(single.find((l) => l.startsWith('| REST'))).toContain('| REST | 3,000 req/s | server CPU **0.85x** baseline (rounds 0.84–0.86, IQR ');
  });

  test('two rows of one measurement in one run are refused', () => {
    expect(() => aggregate([[restRow(1, [1]), restRow(2, [1])]])).toThrow(/two rows "REST"/);
  });
});
