import { readFileSync } from 'node:fs';
import { describe, expect, it } from '@jest/globals';
import fc from 'fast-check';
import { encodeFrame } from '../../../../src/query/frames/encode.ts';
import { scanLogStreams } from '../../../../src/query/kinds/loki/log-frame.ts';
import { LogRows, type RowSink } from '../../../../src/query/kinds/loki/log-rows.ts';
import { wasmModulePath, wasmModuleSource, watFiles } from '../../../../bin/build-wasm.js';

// The vector reader (log-rows.wat) against the byte reader it stands in front of: every answer
// gives the same frame, byte for byte, or the same refusal, whatever its rows hold and wherever
// they fall against the module's regions; and the rows it should take, it does take.

/** The log frame `scanLogStreams` writes, encoded, or null when it does not take the answer. */
function frameOf(body: Buffer, vectors: boolean): string | null {
  const scanned = scanLogStreams(body, undefined, vectors);
  if (!scanned) return null;
  return encodeFrame(scanned.writer.frame({ custom: { frameType: 'LabeledTimeValues' } }));
}

const same = (body: Buffer) => expect(frameOf(body, true)).toEqual(frameOf(body, false));

/** A streams answer of `streams`, each its labels and its rows' bytes as written. */
function answer(streams: Array<{ labels: Record<string, string>; rows: Buffer[]; gap?: string }>): Buffer {
  const parts: Buffer[] = [Buffer.from('{"status":"success","data":{"resultType":"streams","result":[')];
  streams.forEach(({ labels, rows, gap = '' }, s) => {
    parts.push(Buffer.from(`${s > 0 ? ',' : ''}{"stream":${JSON.stringify(labels)},"values":[${gap}`));
    rows.forEach((row, r) => parts.push(Buffer.from(r > 0 ? `,${gap}` : ''), row));
    parts.push(Buffer.from(`${gap}]}`));
  });
  parts.push(Buffer.from(']}}'));
  return Buffer.concat(parts);
}

const row = (ts: string, line: string | Buffer, gap = '') => Buffer.concat([
  Buffer.from(`[${gap}"${ts}"${gap},${gap}"`), Buffer.isBuffer(line) ? line : Buffer.from(line), Buffer.from(`"${gap}]`),
]);

/** Pieces of a line's JSON string as an upstream may write them: runs that cross the 16-byte steps, every escape, raw bytes. */
const piece = fc.oneof(
  { weight: 8, arbitrary: fc.string({ unit: fc.constantFrom(...'abc xyz=/09_-.:'.split('')), maxLength: 40 }).map((s) => Buffer.from(s)) },
  { weight: 3, arbitrary: fc.constantFrom('\\"', '\\\\', '\\n', '\\t', '\\r', '\\b', '\\f', '\\/', '\\x', '\\').map((s) => Buffer.from(s)) },
  { weight: 3, arbitrary: fc.constantFrom('\\u003c', '\\u003e', '\\u0026', '\\u003C', '\\u0000', '\\u001f', '\\u0008', '\\u000a', '\\u0041', '\\u00e9', '\\u2028', '\\u2029', '\\u20', '\\ud83d\\ude00', '\\uzzzz').map((s) => Buffer.from(s)) },
  { weight: 3, arbitrary: fc.constantFrom('<', '>', '&', '<b>&amp;</b>').map((s) => Buffer.from(s)) },
  { weight: 2, arbitrary: fc.constantFrom('é', '🌙', '\u2028', '\u2029', '\u007f').map((s) => Buffer.from(s)) },
  { weight: 1, arbitrary: fc.constantFrom([0xff], [0xc3], [0xe2, 0x80], [0x01], [0x1f], [0x00]).map((b) => Buffer.from(b)) },
);
const lineArb = fc.array(piece, { maxLength: 8 }).map((pieces) => Buffer.concat(pieces));
const tsArb = fc.oneof(
  { weight: 6, arbitrary: fc.bigInt({ min: 0n, max: 9_999_999_999_999_999_999n }).map(String) },
  { weight: 1, arbitrary: fc.constantFrom('', '0', '000123', '99999999999999999999', '-5', '+5', '12a', ' 1') },
);
const rowArb = fc.record({ ts: tsArb, line: lineArb, gap: fc.constantFrom('', '', '', ' ', '\n\t'), extra: fc.constantFrom('', '', '', ',{}', ',"x"') })
  .map(({ ts, line, gap, extra }) => {
    const written = row(ts, line, gap);
    return extra ? Buffer.concat([written.subarray(0, written.length - 1 - gap.length), Buffer.from(extra), written.subarray(written.length - 1 - gap.length)]) : written;
  });
const labelsArb = fc.constantFrom<Record<string, string>>({ job: 'app' }, { job: 'app', level: 'error' }, {}, { a: '<&>', b: 'é' });
const answerArb = fc.array(fc.record({ labels: labelsArb, rows: fc.array(rowArb, { maxLength: 12 }), gap: fc.constantFrom('', ' ') }), { minLength: 1, maxLength: 4 }).map(answer);

describe('Loki log rows read by vectors', () => {
  it('gives the frame the byte reader gives, or the same refusal, for any rows (property)', () => {
    fc.assert(fc.property(answerArb, (body) => same(body)), { numRuns: 3000 });
  });

  it('gives the same frame when rows cross the input window, fill a region, or outgrow one', () => {
    const plain = (i: number) => `ts=${i} level=info msg=\\"request served\\" path=/api/v1/items/${i}`.repeat(1 + (i % 7));
    // Rows of every length across several input windows.
    same(answer([{ labels: { job: 'app' }, rows: Array.from({ length: 6000 }, (_, i) => row(String(1700000000000000000n + BigInt(i)), plain(i))) }]));
    // The same answer cut short in a row: what the last longer answer left in the module's memory is not read on.
    const long = answer([{ labels: { job: 'app' }, rows: Array.from({ length: 100 }, (_, i) => row(String(i), plain(i))) }]);
    expect(frameOf(long, true)).not.toBeNull();
    for (const cut of [long.length - 40, Math.floor(long.length / 2)]) expect(frameOf(long.subarray(0, cut), true)).toBeNull();
    // More rows than the rows region holds in one window.
    same(answer([{ labels: { job: 'app' }, rows: Array.from({ length: 30_000 }, (_, i) => row(String(i % 10), 'a')) }]));
    // A line longer than the window, then one whose escaped `<` outgrow the lines region, then plain rows again.
    same(answer([{ labels: {}, rows: [row('1', 'x'.repeat(300_000)), row('2', '<'.repeat(60_000)), row('3', '&amp;'.repeat(20_000)), ...Array.from({ length: 50 }, (_, i) => row(String(i), plain(i)))] }]));
  });

  it('takes plain rows, escapes and all, and stops before the first row it leaves to the byte reader', () => {
    const rows = LogRows.open();
    expect(rows).not.toBeNull();
    const taken: number[] = [];
    const sink: RowSink = { rowsFrom: (_lines, _times, _hashes, n) => void taken.push(n) };
    const values = [row('1', 'a <b> & \\"c\\" \\u003c'), row('2', 'x'.repeat(100)), row('3', 'é'), row('4', 'd')];
    const body = Buffer.concat([Buffer.from('['), ...values.flatMap((v, i) => (i > 0 ? [Buffer.from(','), v] : [v])), Buffer.from(']')]);
    const stopped = rows!.read(body, 1, sink);
    expect({ taken, done: rows!.done, stopped }).toEqual({ taken: [2], done: false, stopped: 1 + values[0]!.length + 1 + values[1]!.length + 1 });
    const after = rows!.read(body, stopped + values[2]!.length + 1, sink);
    expect({ taken, done: rows!.done, after }).toEqual({ taken: [2, 1], done: true, after: body.length });
  });

  it('is the module its text assembles to', async () => {
    const [wat] = watFiles().filter((file: string) => file.endsWith('log-rows.wat'));
    expect(readFileSync(wasmModulePath(wat), 'utf8')).toBe(await wasmModuleSource(wat));
  });
});
