import type { IncomingHttpHeaders } from 'node:http';
import { describe, expect, it } from '@jest/globals';
import { responseHeaders, STRIPPED_RESPONSE_HEADERS } from '../../src/upstream/headers.ts';

describe('responseHeaders', () => {
  // [header as the upstream sends it (node lower-cases names), value, reaches the client?]
  const table: Array<[name: string, value: string | string[], kept: boolean]> = [
    // Per-response headers pass through.
    ['content-type', 'application/json', true],
    ['content-length', '12', true],
    ['content-encoding', 'gzip', true],
    ['cache-control', 'max-age=60', true],
    ['etag', '"abc"', true],
    ['last-modified', 'Wed, 21 Oct 2015 07:28:00 GMT', true],
    ['location', '/elsewhere', true],
    ['vary', 'accept-encoding', true],
    ['www-authenticate', 'Bearer', true],
    ['x-prometheus-api-version', 'v1', true],
    ['x-content-type-options', 'nosniff', true],
    ['cross-origin-resource-policy', 'same-origin', true],
    // Hop-by-hop.
    ['connection', 'keep-alive', false],
    ['keep-alive', 'timeout=5', false],
    ['proxy-connection', 'keep-alive', false],
    ['transfer-encoding', 'chunked', false],
    ['upgrade', 'h2c', false],
    ['trailer', 'x-checksum', false],
    ['te', 'trailers', false],
    ['proxy-authenticate', 'Basic', false],
    // Cookies for our origin.
    ['set-cookie', ['grafana_session=stolen; Path=/', 'b=2'], false],
    ['set-cookie2', 'a=1', false],
    // Origin-wide policies a browser remembers.
    ['strict-transport-security', 'max-age=31536000; includeSubDomains; preload', false],
    ['alt-svc', 'h3=":443"; ma=86400', false],
    ['public-key-pins', 'pin-sha256="x"; max-age=5184000', false],
    ['public-key-pins-report-only', 'pin-sha256="x"; report-uri="https://evil.example"', false],
    ['expect-ct', 'max-age=86400, enforce', false],
    ['nel', '{"report_to":"x","max_age":86400}', false],
    ['report-to', '{"group":"x","max_age":86400,"endpoints":[{"url":"https://evil.example"}]}', false],
    ['reporting-endpoints', 'x="https://evil.example"', false],
    ['accept-ch', 'Sec-CH-UA-Full-Version-List', false],
    ['accept-ch-lifetime', '86400', false],
    ['critical-ch', 'Sec-CH-UA-Model', false],
    ['origin-agent-cluster', '?1', false],
    ['set-login', 'logged-in', false],
    ['clear-site-data', '"cookies", "storage", "cache"', false],
    ['service-worker-allowed', '/', false],
    // Cross-origin reads of our origin's responses.
    ['access-control-allow-origin', '*', false],
    ['access-control-allow-credentials', 'true', false],
    ['access-control-allow-methods', 'GET, POST', false],
    ['access-control-allow-headers', 'authorization', false],
    ['access-control-expose-headers', 'x-secret', false],
    ['access-control-max-age', '600', false],
    ['access-control-allow-private-network', 'true', false],
    ['timing-allow-origin', '*', false],
    // The policy is ours.
    ['content-security-policy-report-only', "default-src 'none'; report-uri https://evil.example", false],
  ];

  it.each(table)('%s reaches the client: %s', (name, value, kept) => {
    const out = responseHeaders({ [name]: value } as IncomingHttpHeaders);
    expect(name in out).toBe(kept);
    if (kept) expect(out[name]).toEqual(value);
  });

  it('lists exactly the headers the table expects to be dropped', () => {
    const dropped = table.filter(([, , kept]) => !kept).map(([name]) => name);
    expect([...STRIPPED_RESPONSE_HEADERS].filter((name) => name !== 'content-security-policy').sort()).toEqual(dropped.sort());
  });

  it('always answers with the sandbox policy, replacing the upstream one', () => {
    expect(responseHeaders({})).toEqual({ 'content-security-policy': 'sandbox' });
    expect(responseHeaders({ 'content-security-policy': "script-src 'unsafe-inline'" })['content-security-policy']).toBe('sandbox');
  });

  it('drops headers the upstream declared hop-by-hop in its Connection header', () => {
    const out = responseHeaders({ connection: 'keep-alive, X-Hop, x-other ', 'x-hop': '1', 'x-other': '2', 'x-end-to-end': '3' });
    expect(out).toEqual({ 'x-end-to-end': '3', 'content-security-policy': 'sandbox' });
    expect(responseHeaders({ connection: 'close', 'x-kept': '1' })).toEqual({ 'x-kept': '1', 'content-security-policy': 'sandbox' });
  });

  it('never returns undefined values', () => {
    expect(responseHeaders({ 'x-a': undefined, 'x-b': 'b' })).toEqual({ 'x-b': 'b', 'content-security-policy': 'sandbox' });
  });
});
