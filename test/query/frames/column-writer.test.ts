import { describe, expect, it } from '@jest/globals';
import { ColumnWriter } from '../../../src/query/frames/column-writer.ts';

const text = (bytes: Uint8Array) => Buffer.from(bytes).toString('utf8');

describe('ColumnWriter', () => {
  it('writes an empty column as []', () => {
    const column = new ColumnWriter(4).done();
    expect([text(column.json), column.rows]).toEqual(['[]', 0]);
  });

  it('writes rows of text and copied bytes, commas between, growing past its first buffer', () => {
    const writer = new ColumnWriter(1);
    const source = Buffer.from('xx"a long string row that is well over sixty-four bytes long, copied in one go"yy');
    writer.text('1');
    writer.text('null');
    writer.copy(source, 2, source.length - 2);
    writer.copy(Buffer.from('[2.5]'), 1, 4);
    for (let i = 0; i < 300; i++) writer.text(String(i));
    const column = writer.done();
    const values = JSON.parse(text(column.json)) as unknown[];
    expect(values.slice(0, 4)).toEqual([1, null, 'a long string row that is well over sixty-four bytes long, copied in one go', 2.5]);
    expect(values.slice(4)).toEqual(Array.from({ length: 300 }, (_, i) => i));
    expect(column.rows).toBe(304);
    // The JSON lies in the buffer handed back with it, to be given back once written.
    expect(column.buffer!.buffer).toBe(column.json.buffer);
    expect(column.buffer!.length).toBeGreaterThanOrEqual(column.json.length);
  });

  it('takes rows written elsewhere, joined by commas, first or after others, growing as needed', () => {
    const writer = new ColumnWriter(1);
    writer.joined(Buffer.from('"a","b"'), 2);
    writer.text('1');
    writer.joined(Buffer.from(''), 0);
    writer.joined(Buffer.from(Array.from({ length: 200 }, (_, i) => String(i)).join(',')), 200);
    const column = writer.done();
    expect(JSON.parse(text(column.json))).toEqual(['a', 'b', 1, ...Array.from({ length: 200 }, (_, i) => i)]);
    expect(column.rows).toBe(203);
  });

  it.each([0, 1, 2, 3, 7, 8, 100, 1025])('repeats a row %i times after other rows, as that many copies', (count) => {
    const writer = new ColumnWriter(1);
    writer.text('1');
    writer.repeat(Buffer.from('{"a":"b"}'), count);
    writer.text('2');
    writer.repeat(Buffer.from('"x"'), count);
    const column = writer.done();
    const expected = [1, ...Array.from({ length: count }, () => ({ a: 'b' })), 2, ...Array.from({ length: count }, () => 'x')];
    expect(JSON.parse(text(column.json))).toEqual(expected);
    expect(column.rows).toBe(expected.length);
  });

  it('repeats a row as the first rows of a column', () => {
    const writer = new ColumnWriter(1);
    writer.repeat(Buffer.from('[]'), 5);
    expect(text(writer.done().json)).toBe('[[],[],[],[],[]]');
  });
});
