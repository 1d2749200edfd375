import { describe, expect, it } from '@jest/globals';
import { framesToValues } from '../../../../src/query/expressions/convert.ts';
import type { Series } from '../../../../src/query/expressions/values.ts';
import { encodeFrame } from '../../../../src/query/frames/encode.ts';
import type { DataQuery } from '../../../../src/query/kinds/kind.ts';
import { prometheusCall } from '../../../../src/query/kinds/prometheus/index.ts';
import { displayName, prometheusResponse } from '../../../../src/query/kinds/prometheus/frames.ts';
import { interpolate, parsePrometheusQuery, type PrometheusQuery } from '../../../../src/query/kinds/prometheus/model.ts';

// The original's Prometheus backend as pure steps: model -> step and expression, query -> upstream
// call, upstream JSON -> frames (compared with the original's golden file range_simple).

const S = 1000;
const M = 60 * S;
const H = 60 * M;

function dataQuery(model: Record<string, unknown>, rangeMs: number, extra: Partial<DataQuery> = {}): DataQuery {
  return { refId: 'A', queryType: '', intervalMs: 1000, maxDataPoints: 100, range: { from: 1_700_000_000_000, to: 1_700_000_000_000 + rangeMs }, model, ...extra };
}

describe('step (calculatePrometheusInterval)', () => {
  it.each([
    ['grafana-client health check: 5m, intervalMs 30000, 100 points', { intervalMs: 30000 }, '', 5 * M, 100, 30 * S],
    ['min step from the data source scrape interval', {}, '1m', 5 * M, 100, M],
    ['the query\'s own min interval beats intervalMs', { interval: '2m', intervalMs: 30000 }, '', 5 * M, 100, 2 * M],
    ['a bare number is seconds', { interval: '30' }, '', 5 * M, 100, 30 * S],
    ['the range over max data points, rounded', { intervalMs: 1000 }, '', 24 * H, 1500, M],
    ['the 11,000-point safety wins over tiny steps', { intervalMs: 1 }, '', 2 * 24 * H, 100_000, 15 * S],
    ['intervalFactor multiplies', { intervalMs: 15000, intervalFactor: 2 }, '', 5 * M, 100, 30 * S],
    ['$__rate_interval as min step: max(step + scrape, 4 x scrape)', { interval: '$__rate_interval', intervalMs: 30000 }, '', 5 * M, 100, M],
    ['$__interval as min step is ignored', { interval: '$__interval', intervalMs: 0 }, '', 5 * M, 100, 15 * S],
  ])('%s', (_title, model, scrape, range, points, step) => {
    const q = parsePrometheusQuery(dataQuery(model, range, { maxDataPoints: points }), scrape) as PrometheusQuery;
    expect(q.stepMs).toBe(step);
  });

  it('fails a refId whose min interval does not parse, and runs a range query when neither flag is set', () => {
    expect(parsePrometheusQuery(dataQuery({ interval: 'soon' }, 5 * M), '')).toEqual({ error: 'time: invalid duration "soon"' });
    expect(parsePrometheusQuery(dataQuery({ expr: 'up' }, 5 * M), '')).toMatchObject({ range: true, instant: false });
  });
});

describe('interpolation (interpolateVariables)', () => {
  it.each([
    ['rate(x[$__interval])', 'rate(x[1m])'],
    ['rate(x[${__interval}]) * $__interval_ms', 'rate(x[1m]) * 60000'],
    ['$__range $__range_s $__range_ms', '3600s 3600 3600000'],
    ['rate(x[$__rate_interval]) $__rate_interval_ms', 'rate(x[1m15s]) 75000'],
  ])('%s', (expr, expected) => {
    // query interval 1m, step 1m, no min step, scrape 15s, range 1h
    expect(interpolate(expr, M, M, '', '15s', H)).toBe(expected);
  });

  it('$__rate_interval as the min step is the step itself', () => {
    expect(interpolate('[$__rate_interval]', 30 * S, 2 * M, '$__rate_interval', '', H)).toBe('[2m0s]');
  });
});

describe('display names (getName)', () => {
  const q = (legendFormat: string) => ({ legendFormat, expr: 'sum(up)' });
  it.each([
    ['', { __name__: 'up', job: 'api', instance: 'a:1' }, 'up{instance="a:1", job="api"}'],
    ['', { __name__: 'up' }, 'up'],
    ['', {}, 'sum(up)'],
    ['{{job}} / {{ instance }} {{nope}}', { job: 'api', instance: 'a:1' }, 'api / a:1 '],
    ['__auto', { job: 'api' }, ''],
    ['__auto', {}, 'sum(up)'],
  ])('legend %j over %j', (legend, labels, name) => {
    expect(displayName(q(legend), labels)).toBe(name);
  });
});

describe('upstream calls', () => {
  const query = parsePrometheusQuery(dataQuery({ expr: 'up', intervalMs: 15000 }, 5 * M + 7 * S, { maxDataPoints: 1000 }), '') as PrometheusQuery;

  it('POSTs a sorted form with start and end aligned to the step by default', () => {
    expect(prometheusCall({}, query, 'range')).toEqual({
      method: 'POST', path: 'api/v1/query_range', query: undefined, headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: 'end=1700000295&query=up&start=1699999995&step=15',
    });
    expect(prometheusCall({ queryTimeout: '20s' }, query, 'instant').body).toBe('query=up&time=1700000307&timeout=20s');
  });

  it('sends GET with the parameters in the query string, custom query parameters appended', () => {
    expect(prometheusCall({ httpMethod: 'GET', customQueryParameters: 'dedup=true' }, query, 'instant')).toEqual({
      method: 'GET', path: 'api/v1/query', query: 'query=up&time=1700000307&dedup=true',
    });
  });
});

describe('frames (converter/prom.go and response.go)', () => {
  const q: PrometheusQuery = { refId: 'A', expr: '', stepMs: 1000, legendFormat: '', start: 0, end: 0, range: true, instant: false, exemplar: false, utcOffsetSec: 0 };
  const metric = (code: string) => ({ __name__: 'prometheus_http_requests_total', code, handler: '/api/v1/query_range', job: 'prometheus' });

  it("matches the original's golden range_simple answer", () => {
    const upstream = { status: 'success', data: { resultType: 'matrix', result: [
      { metric: metric('200'), values: [[1641889530.123, '21'], [1641889531.123, '32'], [1641889532.123, '43']] },
      { metric: metric('400'), values: [[1641889529.123, '54'], [1641889532.123, '76']] },
    ] } };
    const response = prometheusResponse(q, 200, Buffer.from(JSON.stringify(upstream)), 1e6);
    const meta = (first: boolean) => ({ type: 'timeseries-multi', typeVersion: [0, 1], custom: { resultType: 'matrix' }, ...(first ? { executedQueryString: 'Expr: \nStep: 1s' } : {}) });
    const fields = (code: string) => [
      { name: 'Time', type: 'time', typeInfo: { frame: 'time.Time' }, config: { interval: 1000 } },
      { name: 'prometheus_http_requests_total', type: 'number', typeInfo: { frame: 'float64' }, labels: metric(code),
        config: { displayNameFromDS: `prometheus_http_requests_total{code="${code}", handler="/api/v1/query_range", job="prometheus"}` } },
    ];
    const golden = [
      { schema: { meta: meta(true), fields: fields('200') }, data: { values: [[1641889530123, 1641889531123, 1641889532123], [21, 32, 43]] } },
      { schema: { meta: meta(false), fields: fields('400') }, data: { values: [[1641889529123, 1641889532123], [54, 76]] } },
    ];
    expect(response.status).toBeUndefined();
    expect(response.frames!.map(encodeFrame)).toEqual(golden.map((f) => JSON.stringify(f)));
  });

  it('answers NaN as null with entities (golden range_nan), warnings as notices, other statuses with the body\'s start', () => {
    const nan = prometheusResponse(q, 200, Buffer.from(JSON.stringify({ status: 'success', warnings: ['careful'], data: { resultType: 'matrix', result: [{ metric: { job: 'p' }, values: [[1, 'NaN'], [2, '+Inf']] }] } })), 1e6);
    expect(encodeFrame(nan.frames![0]!)).toContain('"values":[[1000,2000],[null,null]],"entities":[null,{"NaN":[0],"Inf":[1]}]');
    expect(nan.frames![0]!.meta!.notices).toEqual([{ severity: 'warning', text: 'careful' }]);
    // Expressions and the graph read the values themselves: NaN and Inf, not the nulls written.
    const [series] = framesToValues('prometheus', nan.frames!) as Series[];
    expect([...series!.times]).toEqual([1000, 2000]);
    expect([...series!.values]).toEqual([NaN, Infinity]);
    const proxyError = prometheusResponse(q, 502, Buffer.from('bad gateway'), 1e6);
    expect(proxyError).toMatchObject({ error: 'unexpected response with status code 502: bad gateway', errorSource: 'downstream', status: 502 });
    const unavailable = prometheusResponse(q, 503, Buffer.from(JSON.stringify({ status: 'error', errorType: 'unavailable', error: 'too many queries' })), 1e6);
    expect(unavailable).toMatchObject({ error: 'unavailable: too many queries', status: 503 });
    const unprocessable = prometheusResponse(q, 422, Buffer.from(JSON.stringify({ status: 'error', errorType: 'execution', error: 'query timed out' })), 1e6);
    expect(unprocessable).toMatchObject({ error: 'execution: query timed out', status: 422, errorSource: 'downstream' });
  });
});
