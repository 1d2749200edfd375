/**
 * Pure helpers of the TestData kind: a seedable random source, the original's label syntax, Go's
 * duration syntax, its CSV value typing and FNV-1 hash. Kept apart from the scenarios so they are
 * table-tested on their own.
 */
import type { Field } from '../../frames/frame.ts';

export { parseGoDuration } from '../../durations.ts';

/** Uniform numbers in [0, 1). */
export type Random = () => number;

/**
 * mulberry32: small, fast and good enough for test data. The original seeds Go's math/rand;
 * its exact sequence is not reproducible here, only the reproducibility itself.
 */
export function seededRandom(seed: number): Random {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** A random source for one series: seeded from the model's `seed` when it has one, else Math.random. */
export function randomFor(seed: number | undefined, stream: number): Random {
  if (seed === undefined) return Math.random;
  // Each series (and each use) gets its own stream, so adding a series does not shift the others.
  return seededRandom(Math.imul(seed | 0, 0x9e3779b1) ^ Math.imul(stream + 1, 0x85ebca6b));
}

/**
 * `{job="foo", instance="$seriesIndex"}` as the original parses it (`parseLabelsString`): split on
 * commas and the first `=`, quotes trimmed, `$seriesIndex` replaced. Always an object, `{}` when empty.
 */
export function parseLabels(text: string, seriesIndex: number): Record<string, string> {
  const labels: Record<string, string> = {};
  if (text === '') return labels;
  const inner = trimChars(text, '{}');
  if (inner.length < 2) return labels;
  for (const pair of inner.split(',')) {
    const eq = pair.indexOf('=');
    // The original slices at -1 here and panics; a pair without `=` is skipped instead.
    if (eq < 0) continue;
    const key = pair.slice(0, eq).trim();
    const value = trimChars(pair.slice(eq + 1).trim(), '"').replaceAll('$seriesIndex', String(seriesIndex));
    labels[key] = value;
  }
  return labels;
}

function trimChars(text: string, chars: string): string {
  let start = 0;
  let end = text.length;
  while (start < end && chars.includes(text[start])) start++;
  while (end > start && chars.includes(text[end - 1])) end--;
  return text.slice(start, end);
}

const INT = /^[+-]?\d+$/;
const FLOAT = /^[+-]?(\d+(_?\d+)*\.?\d*|\.\d+)([eE][+-]?\d+)?$|^[+-]?(inf|infinity|nan)$/i;

/** Go's `strconv.ParseFloat` for the forms CSV input uses; undefined when it would fail. */
export function parseGoFloat(text: string): number | undefined {
  if (!FLOAT.test(text)) return undefined;
  const lower = text.toLowerCase().replace(/^\+/, '');
  if (lower === 'inf' || lower === 'infinity') return Infinity;
  if (lower === '-inf' || lower === '-infinity') return -Infinity;
  if (lower === 'nan' || lower === '-nan') return NaN;
  return Number(text.replaceAll('_', ''));
}

/**
 * Types CSV values as the original does (`csvValuesToField`): booleans when the first value looks
 * like one, else int64 when every non-empty value is an integer, else float64, else string; all
 * nullable, with `""` and `null` as null.
 */
export function csvValuesToField(parts: readonly string[]): Field {
  const first = (parts[0] ?? '').toUpperCase();
  if (first === 'T' || first === 'F' || first === 'TRUE' || first === 'FALSE') {
    return {
      name: '',
      type: 'bool',
      nullable: true,
      values: parts.map((raw) => {
        const upper = raw.toUpperCase();
        return upper === 'NULL' || upper === '' ? null : upper === 'T' || upper === 'TRUE';
      }),
    };
  }
  const isNull = (raw: string) => raw === 'null' || raw === '';
  const typed = (type: 'int64' | 'float64', parse: (raw: string) => number | undefined): Field | undefined => {
    const values: (number | null)[] = new Array(parts.length).fill(null);
    // As the original: the loop stops at the first failure, and one parsed value makes it a match.
    let ok = false;
    for (let i = 0; i < parts.length; i++) {
      if (isNull(parts[i])) continue;
      const value = parse(parts[i]);
      if (value === undefined) return undefined;
      values[i] = value;
      ok = true;
    }
    return ok ? { name: '', type, nullable: true, values } : undefined;
  };
  return (
    typed('int64', (raw) => (INT.test(raw) && Number.isSafeInteger(Number(raw)) ? Number(raw) : undefined)) ??
    typed('float64', parseGoFloat) ?? { name: '', type: 'string', nullable: true, values: parts.map((raw) => (isNull(raw) ? null : raw)) }
  );
}

/** 32-bit FNV-1 (Go's `hash/fnv.New32`) of a string's UTF-8 bytes, as 8 hex digits without leading zeros. */
export function fnv1Hex(text: string): string {
  let hash = 0x811c9dc5;
  for (const byte of Buffer.from(text, 'utf8')) {
    hash = Math.imul(hash, 0x01000193) >>> 0;
    hash = (hash ^ byte) >>> 0;
  }
  return hash.toString(16);
}

/**
 * Reads CSV records as Go's `encoding/csv` does with its defaults: quoted fields with `""`
 * escapes, CRLF or LF, every record as long as the first. Throws Go's error text.
 */
export function readCsv(text: string): string[][] {
  const records: string[][] = [];
  let line = 1;
  let pos = 0;
  let expected = -1;
  while (pos < text.length) {
    const recordLine = line;
    const record: string[] = [];
    for (;;) {
      let value = '';
      if (text[pos] === '"') {
        pos++;
        for (;;) {
          if (pos >= text.length) throw new Error(`record on line ${recordLine}; parse error on line ${line + 1}, column 0: extraneous or missing " in quoted-field`);
          const char = text[pos];
          if (char === '"') {
            if (text[pos + 1] === '"') {
              value += '"';
              pos += 2;
              continue;
            }
            pos++;
            break;
          }
          if (char === '\n') line++;
          value += char;
          pos++;
        }
        if (pos < text.length && text[pos] !== ',' && text[pos] !== '\n' && text[pos] !== '\r') {
          throw new Error(`parse error on line ${line}, column ${pos}: extraneous or missing " in quoted-field`);
        }
      } else {
        while (pos < text.length && text[pos] !== ',' && text[pos] !== '\n' && !(text[pos] === '\r' && text[pos + 1] === '\n')) value += text[pos++];
      }
      record.push(value);
      if (text[pos] === ',') {
        pos++;
        continue;
      }
      if (text[pos] === '\r') pos++;
      if (text[pos] === '\n') pos++;
      line++;
      break;
    }
    // encoding/csv skips empty lines.
    if (record.length === 1 && record[0] === '') continue;
    if (expected < 0) expected = record.length;
    else if (record.length !== expected) throw new Error(`record on line ${recordLine}: wrong number of fields`);
    records.push(record);
  }
  return records;
}
