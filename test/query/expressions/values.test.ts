import { describe, expect, it } from '@jest/globals';
import { encodeFrame } from '../../../src/query/frames/encode.ts';
import { Framer, newSeries, setNull, toFrame, WRITTEN_SERIES_ROWS, type Series } from '../../../src/query/expressions/values.ts';

// Long series are framed as written columns (their JSON, outside the JS heap): the same frames on
// the wire and the same values when read back as series framed as arrays.

function longSeries(rows: number, at: (i: number) => number | null): Series {
  const series = newSeries('B', { host: 'a' }, rows);
  for (let i = 0; i < rows; i++) {
    series.times[i] = 1_700_000_000_000 + i * 1000;
    const v = at(i);
    if (v === null) setNull(series, i);
    else series.values[i] = v;
  }
  return series;
}

const SPECIAL = [0, -0, 1, -1.5, 1e-7, -1e-7, 1e-6, 123456789.123, 1e21, -1e21, 1e300, 5e-324, NaN, Infinity, -Infinity, null, 0.1 + 0.2];

describe('toFrame of a long series', () => {
  it('writes what the array frame writes, entities and nulls included, and reads back the same values', () => {
    const series = longSeries(WRITTEN_SERIES_ROWS + 17, (i) => SPECIAL[i % SPECIAL.length]!);
    const plain = toFrame('B', series);
    const written = toFrame('B', series, new Framer());
    expect(written.fields[0]!.written).toBeDefined();
    expect(written.fields[1]!.written).toBeDefined();
    expect(encodeFrame(written)).toBe(encodeFrame(plain));
    expect(written.fields[0]!.values).toEqual(plain.fields[0]!.values);
    // As any reader of the wire: -0 is written 0.
    expect(written.fields[1]!.values).toEqual(plain.fields[1]!.values.map((v) => (Object.is(v, -0) ? 0 : v)));
    expect(written.fields[1]).toMatchObject({ name: 'B', type: 'float64', nullable: true, labels: { host: 'a' } });
  });

  it('shares the time column of consecutive series on the same times', () => {
    const framer = new Framer();
    const a = toFrame('B', longSeries(WRITTEN_SERIES_ROWS, (i) => i), framer);
    const b = toFrame('B', longSeries(WRITTEN_SERIES_ROWS, (i) => -i), framer);
    const shifted = longSeries(WRITTEN_SERIES_ROWS, (i) => i);
    shifted.times[5] += 1;
    const c = toFrame('B', shifted, framer);
    expect(b.fields[0]!.written).toBe(a.fields[0]!.written);
    expect(c.fields[0]!.written).not.toBe(a.fields[0]!.written);
    expect(encodeFrame(c)).toBe(encodeFrame(toFrame('B', shifted)));
  });

  it('frames short series as arrays', () => {
    const frame = toFrame('B', longSeries(WRITTEN_SERIES_ROWS - 1, (i) => i), new Framer());
    expect(frame.fields[1]!.written).toBeUndefined();
  });
});
