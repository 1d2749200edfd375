import { describe, expect, it } from '@jest/globals';
import { mergeDataSourceEvents, parseDataSourceNotice, type DataSourceEvent } from '../../../src/live/feeds/data-sources.ts';

describe('data source notices', () => {
  it.each([
    ['1:42', { orgId: 1, id: 42, uid: null, op: null }],
    ['1:42:created', { orgId: 1, id: 42, uid: null, op: 'created' }],
    [' 3:7:DELETE ', { orgId: 3, id: 7, uid: null, op: 'deleted' }],
    ['2:prom-main:update', { orgId: 2, id: null, uid: 'prom-main', op: 'updated' }],
    ['x:42', { orgId: null, id: 42, uid: null, op: null }],
    ['1:42:renamed', { orgId: 1, id: 42, uid: null, op: null }],
    ['{"org_id":5,"id":"9","tg_op":"INSERT"}', { orgId: 5, id: 9, uid: null, op: 'created' }],
    ['{"orgId":5,"uid":"abc","action":"delete"}', { orgId: 5, id: null, uid: 'abc', op: 'deleted' }],
    ['{"datasourceId":4,"extra":true}', { orgId: null, id: 4, uid: null, op: null }],
  ])('%s', (payload, notice) => {
    expect(parseDataSourceNotice(payload)).toEqual(notice);
  });

  it.each(['', '1', '1:', '{"orgId":1}', '{"id":-3,"uid":""}', '{not json', '[1,2]', 'null'])('names no data source: %j', (payload) => {
    expect(parseDataSourceNotice(payload)).toBeNull();
  });

  it('refuses ids that are not positive safe integers', () => {
    expect(parseDataSourceNotice('1:0')).toEqual({ orgId: 1, id: null, uid: '0', op: null });
    expect(parseDataSourceNotice('{"id":1e300}')).toBeNull();
    expect(parseDataSourceNotice('{"id":9007199254740993}')).toBeNull();
  });
});

describe('data source events waiting for a slow reader', () => {
  const event = (kind: DataSourceEvent['kind'], name: string): DataSourceEvent => ({ kind, orgId: 1, id: 1, uid: 'u', name, dataSource: null });

  it.each([
    ['CREATED', 'DELETED', null],
    ['CREATED', 'UPDATED', 'CREATED'],
    ['UPDATED', 'UPDATED', 'UPDATED'],
    ['UPDATED', 'DELETED', 'DELETED'],
    ['DELETED', 'CREATED', 'CREATED'],
  ] as const)('%s then %s: %s', (older, newer, merged) => {
    const result = mergeDataSourceEvents(event(older, 'old'), event(newer, 'new'));
    if (merged === null) expect(result).toBeNull();
    else expect(result).toMatchObject({ kind: merged, name: 'new' });
  });
});
