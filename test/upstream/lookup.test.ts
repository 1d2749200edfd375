import { MESSAGES } from '../../src/errors/messages.ts';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type { LookupAddress, LookupOptions } from 'node:dns';
import { createServer, request, type RequestOptions, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import {
  createGuardedLookup,
  EgressDeniedError,
  hostWhitelisted,
  type LookupCallback,
  type LookupFunction,
} from '../../src/upstream/address.ts';

const DENY = { denyPrivate: true };
const OPEN = { denyPrivate: false };

/** A resolver that answers from a script, one answer per call (the last one repeats), and records calls. */
function fakeDns(...answers: Array<string[] | NodeJS.ErrnoException>) {
  const calls: Array<{ hostname: string; options: LookupOptions }> = [];
  const lookup: LookupFunction = (hostname, options, callback) => {
    calls.push({ hostname, options });
    const answer = answers[Math.min(calls.length - 1, answers.length - 1)]!;
    if (answer instanceof Error) return callback(answer, options.all ? [] : '');
    const list: LookupAddress[] = answer.map((address) => ({ address, family: address.includes(':') ? 6 : 4 }));
    if (options.all) callback(null, list);
    else callback(null, list[0]!.address, list[0]!.family);
  };
  return { lookup, calls };
}

type Outcome = { error: NodeJS.ErrnoException | null; address: string | LookupAddress[]; family?: number };
function resolve(lookup: LookupFunction, hostname: string, options: LookupOptions = {}): Promise<Outcome> {
  return new Promise((done) => lookup(hostname, options, (error, address, family) => done({ error, address, family })));
}

describe('createGuardedLookup', () => {
  it('passes a public answer through in both the single and the all form', async () => {
    const { lookup } = fakeDns(['93.184.216.34', '2606:2800:220:1:248:1893:25c8:1946']);
    const guarded = createGuardedLookup(DENY, lookup);
    expect(await resolve(guarded, 'example.com')).toEqual({ error: null, address: '93.184.216.34', family: 4 });
    expect(await resolve(guarded, 'example.com', { all: true })).toEqual({
      error: null,
      address: [{ address: '93.184.216.34', family: 4 }, { address: '2606:2800:220:1:248:1893:25c8:1946', family: 6 }],
      family: undefined,
    });
  });

  it('decides on every resolution: public first, 127.0.0.1 next (DNS rebinding) is refused', async () => {
    const { lookup, calls } = fakeDns(['93.184.216.34'], ['127.0.0.1']);
    const guarded = createGuardedLookup(DENY, lookup);
    expect((await resolve(guarded, 'rebind.example')).address).toBe('93.184.216.34');
    const second = await resolve(guarded, 'rebind.example');
    expect(second.error).toBeInstanceOf(EgressDeniedError);
    expect(second.error).toMatchObject({ code: 'EGRESS_DENIED', hostname: 'rebind.example', address: '127.0.0.1', addressClass: 'loopback' });
    expect(calls).toHaveLength(2);
  });

  it.each([
    [['127.0.0.1'], 'loopback'],
    [['169.254.169.254'], 'metadata'],
    [['::ffff:169.254.169.254'], 'metadata'],
    [['::ffff:a9fe:a9fe'], 'metadata'],
    [['64:ff9b::7f00:1'], 'loopback'],
    [['fd00:ec2::254'], 'metadata'],
    [['10.0.0.5'], 'private'],
    [['100.64.1.1'], 'private'],
    [['::1'], 'loopback'],
    [['::'], 'unspecified'],
    [['0.0.0.0'], 'unspecified'],
    [['fe80::1'], 'link-local'],
    [['224.0.0.251'], 'multicast'],
    [['not-an-address'], 'invalid'],
  ])('refuses %j (%s), all or not', async (answer, cls) => {
    for (const all of [false, true]) {
      const guarded = createGuardedLookup(DENY, fakeDns(answer).lookup);
      const outcome = await resolve(guarded, 'name.example', { all });
      expect(outcome.error).toMatchObject({ code: 'EGRESS_DENIED', addressClass: cls });
      expect(outcome.address).toEqual(all ? [] : '');
    }
  });

  it.each([
    [['93.184.216.34', '10.0.0.1'], 'private'],
    [['2606:4700::1', 'fc00::1'], 'private'],
    [['8.8.8.8', '8.8.4.4', '::ffff:127.0.0.1'], 'loopback'],
  ])('refuses the mixed all-answer %j whole, whatever order happy eyeballs would try it in', async (answer, cls) => {
    const outcome = await resolve(createGuardedLookup(DENY, fakeDns(answer).lookup), 'mixed.example', { all: true });
    expect(outcome.error).toMatchObject({ code: 'EGRESS_DENIED', addressClass: cls });
    expect(outcome.address).toEqual([]);
  });

  it('allows everything when denyPrivate is off', async () => {
    const guarded = createGuardedLookup(OPEN, fakeDns(['127.0.0.1', '169.254.169.254']).lookup);
    expect((await resolve(guarded, 'localhost')).address).toBe('127.0.0.1');
    expect((await resolve(guarded, 'localhost', { all: true })).address).toHaveLength(2);
  });

  it('passes resolver errors through and turns a throwing resolver into a callback error', async () => {
    const notFound = Object.assign(new Error('getaddrinfo ENOTFOUND nope.invalid'), { code: 'ENOTFOUND' });
    const guarded = createGuardedLookup(DENY, fakeDns(notFound).lookup);
    expect((await resolve(guarded, 'nope.invalid')).error).toBe(notFound);
    const throwing = createGuardedLookup(DENY, () => {
      throw Object.assign(new TypeError('bad hostname'), { code: 'ERR_INVALID_ARG_TYPE' });
    });
    expect((await resolve(throwing, 'x')).error).toMatchObject({ code: 'ERR_INVALID_ARG_TYPE' });
  });

  it('forwards the options and supports the (hostname, family, cb) and (hostname, cb) styles of dns.lookup', async () => {
    const { lookup, calls } = fakeDns(['8.8.8.8']);
    const guarded = createGuardedLookup(DENY, lookup) as unknown as (...args: unknown[]) => void;
    await new Promise<void>((done) => guarded('a.example', 6, ((error, address) => {
      expect([error, address]).toEqual([null, '8.8.8.8']);
      done();
    }) as LookupCallback));
    await new Promise<void>((done) => guarded('b.example', ((error, address) => {
      expect([error, address]).toEqual([null, '8.8.8.8']);
      done();
    }) as LookupCallback));
    await resolve(createGuardedLookup(DENY, lookup), 'c.example', { family: 4, hints: 32, all: true });
    expect(calls.map((c) => c.options)).toEqual([{ family: 6 }, {}, { family: 4, hints: 32, all: true }]);
  });

  it('always answers asynchronously, like dns.lookup', async () => {
    const guarded = createGuardedLookup(DENY, fakeDns(['8.8.8.8']).lookup);
    let answered = false;
    const done = new Promise<void>((ok) => guarded('sync.example', {}, () => {
      answered = true;
      ok();
    }));
    expect(answered).toBe(false);
    await done;
  });

  it('uses dns.lookup by default (localhost resolves, then is refused)', async () => {
    const outcome = await resolve(createGuardedLookup(DENY), 'localhost', { all: true });
    expect(outcome.error).toMatchObject({ code: 'EGRESS_DENIED', addressClass: 'loopback' });
  });
});

describe('createGuardedLookup inside node:http (the way the proxy agents use it)', () => {
  let server: Server;
  let port: number;
  let connections = 0;
  beforeAll(async () => {
    server = createServer((_req, res) => res.end('reached'));
    server.on('connection', () => connections++);
    await new Promise<void>((ok) => server.listen(0, '127.0.0.1', ok));
    port = (server.address() as AddressInfo).port;
  });
  afterAll(() => new Promise<void>((ok) => server.close(() => ok())));

  function get(lookup: LookupFunction, autoSelectFamily: boolean): Promise<string> {
    return new Promise((ok) => {
      // autoSelectFamily reaches net.connect but is missing from the RequestOptions typings.
      const options: RequestOptions = Object.assign({ host: 'upstream.test', port, path: '/', lookup, agent: false }, { autoSelectFamily });
      const req = request(options, (res) => {
        let body = '';
        res.on('data', (chunk: Buffer) => (body += chunk));
        res.on('end', () => ok(body));
      });
      req.on('error', (error: NodeJS.ErrnoException) => ok(`error:${error.code}`));
      req.end();
    });
  }

  it.each([true, false])('with autoSelectFamily %s: a name resolving to loopback gets no connection; allowed when the policy is off', async (auto) => {
    const before = connections;
    const rebinding = fakeDns(['93.184.216.34'], ['127.0.0.1']);
    const guarded = createGuardedLookup(DENY, rebinding.lookup);
    await resolve(guarded, 'upstream.test'); // first answer: the public one, as a validation step would see it
    expect(await get(guarded, auto)).toBe('error:EGRESS_DENIED');
    expect(connections).toBe(before);
    expect(rebinding.calls.at(-1)!.options.all).toBe(auto ? true : undefined);
    expect(await get(createGuardedLookup(OPEN, fakeDns(['127.0.0.1']).lookup), auto)).toBe('reached');
    expect(connections).toBe(before + 1);
  });
});

describe('hostWhitelisted', () => {
  const list = ['prom.example:9090', 'ES.example:9200', '10.0.0.7:80', '[::1]:3100', 'plain.example:80', 'secure.example:443'];
  it.each([
    ['prom.example:9090', list, undefined, true],
    ['PROM.example:9090', list, undefined, true], // host names are case-insensitive
    ['es.example:9200', list, undefined, true],
    ['prom.example:9091', list, undefined, false],
    ['prom.example', list, undefined, false],
    ['evil.example:9090', list, undefined, false],
    ['prom.example.evil:9090', list, undefined, false],
    ['10.0.0.7:80', list, undefined, true],
    ['10.0.0.8:80', list, undefined, false],
    ['[0:0:0:0:0:0:0:1]:3100', list, undefined, true], // IP literals compare canonically
    ['[::1]:3101', list, undefined, false],
    // WHATWG URLs drop default ports: with the scheme, `host` and `host:80`/`host:443` are the same.
    ['plain.example', list, 'http:', true],
    ['secure.example', list, 'https:', true],
    ['secure.example', list, 'http:', false],
    ['plain.example', list, undefined, false],
    ['', list, undefined, false],
    ['anything:1', [], undefined, true], // an empty whitelist allows everything
    ['', [], undefined, true],
  ] as Array<[string, string[], string | undefined, boolean]>)('%j in the list (scheme %s): %s', (hostPort, whitelist, scheme, expected) => {
    expect(hostWhitelisted(hostPort, whitelist, scheme)).toBe(expected);
  });

  it('refuses with Grafana\'s 403 message', () => {
    expect(MESSAGES.proxy.whitelist).toBe('Data proxy hostname and ip are not included in whitelist');
  });
});
