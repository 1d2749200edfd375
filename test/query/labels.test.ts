import { describe, expect, it } from '@jest/globals';
import { noLabels, ownLabel, readLabels } from '../../src/query/labels.ts';

describe('readLabels', () => {
  it('reads string values, null as "", absent and null maps as none, without a prototype', () => {
    const labels = readLabels(JSON.parse('{"job":"api","__proto__":"p","constructor":null}'), 'labels');
    expect(Object.getPrototypeOf(labels)).toBeNull();
    expect(Object.entries(labels)).toEqual([['job', 'api'], ['__proto__', 'p'], ['constructor', '']]);
    expect(Object.keys(readLabels(undefined, 'labels'))).toEqual([]);
    expect(Object.keys(readLabels(null, 'labels'))).toEqual([]);
  });

  it.each<[unknown, string]>([
    [[], 'the metric\'s labels are not an object'],
    ['job', 'the metric\'s labels are not an object'],
    [7, 'the metric\'s labels are not an object'],
    [{ job: 1 }, 'the metric\'s labels: the value of "job" is not a string'],
    [{ 'a\nb': {} }, 'the metric\'s labels: the value of "a\\nb" is not a string'],
  ])('refuses %j as Go\'s decoder would', (raw, message) => {
    expect(() => readLabels(raw, 'the metric\'s labels')).toThrow(message);
  });
});

describe('ownLabel', () => {
  it('reads own keys only, never an inherited property', () => {
    const labels = noLabels();
    labels.job = 'api';
    expect([ownLabel(labels, 'job'), ownLabel(labels, 'constructor'), ownLabel(labels, 'toString')]).toEqual(['api', undefined, undefined]);
    expect(ownLabel({ job: 'x' }, 'hasOwnProperty')).toBeUndefined();
  });
});
