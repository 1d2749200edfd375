/**
 * Where the data source proxy may connect to.
 *
 * The decision is made on IP addresses, never on host names: a name is only as good as its next
 * DNS answer. Two entry points cover every way a connection gets its address:
 * - a host that is already an IP literal never reaches `lookup` (net.connect skips it), so the
 *   caller checks it with `checkLiteralHost` before connecting;
 * - any other host goes through `createGuardedLookup`, which checks the addresses the socket is
 *   about to use (so a name answering public first and 127.0.0.1 later, DNS rebinding, is caught).
 */
import { lookup as dnsLookup, type LookupAddress, type LookupOptions } from 'node:dns';
import { isIPv4, isIPv6 } from 'node:net';
import { domainToASCII } from 'node:url';

export type AddressClass =
  | 'unicast'
  | 'loopback'
  | 'private'
  | 'link-local'
  | 'unspecified'
  | 'multicast'
  | 'broadcast'
  | 'reserved'
  | 'metadata'
  | 'invalid';

/** Where a proxied call may connect to. */
export interface EgressPolicy {
  /** Allow public unicast only (no loopback, private, link-local, metadata, multicast, reserved...). */
  readonly denyPrivate: boolean;
}

// ---------------------------------------------------------------------------------------------
// Address classification

/**
 * Cloud instance-metadata and platform endpoints: they hand out credentials to anyone who can
 * reach them, so they get their own class even where the range (e.g. 168.63.129.16) is public.
 */
const METADATA_V4 = new Set([
  '169.254.169.254', // AWS, GCP, Azure, OCI, DigitalOcean... IMDS
  '169.254.170.2', // AWS ECS task credentials
  '169.254.170.23', // AWS EKS Pod Identity agent
  '100.100.100.200', // Alibaba Cloud
  '168.63.129.16', // Azure WireServer (public range, reachable only from inside Azure)
  '192.0.0.192', // OCI legacy metadata
]);
const METADATA_V6 = new Set(['fd00:ec2::254', 'fd00:ec2::23', 'fd20:ce::254']); // AWS IMDS, EKS Pod Identity, GCP

/** IPv4 ranges that are not public unicast, most specific class first where they overlap. */
const V4_RANGES: ReadonlyArray<readonly [network: string, prefix: number, cls: AddressClass]> = [
  ['255.255.255.255', 32, 'broadcast'],
  ['0.0.0.0', 32, 'unspecified'],
  ['0.0.0.0', 8, 'reserved'], // "this network": Linux routes some of it to the local host
  ['10.0.0.0', 8, 'private'],
  ['100.64.0.0', 10, 'private'], // CGNAT shared space: the provider's network, not the internet
  ['127.0.0.0', 8, 'loopback'],
  ['169.254.0.0', 16, 'link-local'],
  ['172.16.0.0', 12, 'private'],
  ['192.0.0.0', 24, 'reserved'], // IETF protocol assignments
  ['192.0.2.0', 24, 'reserved'], // TEST-NET-1
  ['192.88.99.0', 24, 'reserved'], // deprecated 6to4 relay anycast
  ['192.168.0.0', 16, 'private'],
  ['198.18.0.0', 15, 'reserved'], // benchmarking (also used for fake-IP DNS in some gateways)
  ['198.51.100.0', 24, 'reserved'], // TEST-NET-2
  ['203.0.113.0', 24, 'reserved'], // TEST-NET-3
  ['224.0.0.0', 4, 'multicast'],
  ['240.0.0.0', 4, 'reserved'],
];
const V4_TABLE = V4_RANGES.map(([network, prefix, cls]) => {
  const mask = prefix === 0 ? 0 : (0xffffffff << (32 - prefix)) >>> 0;
  return { base: (dottedToNumber(network)! & mask) >>> 0, mask, cls };
});

function dottedToNumber(text: string): number | null {
  if (!isIPv4(text)) return null;
  return text.split('.').reduce((acc, part) => acc * 256 + Number(part), 0);
}

function numberToDotted(value: number): string {
  return [value >>> 24, (value >>> 16) & 0xff, (value >>> 8) & 0xff, value & 0xff].join('.');
}

function classifyV4(value: number): AddressClass {
  if (METADATA_V4.has(numberToDotted(value))) return 'metadata';
  for (const { base, mask, cls } of V4_TABLE) if (((value & mask) >>> 0) === base) return cls;
  return 'unicast';
}

/**
 * The class of an IPv4 address carried inside an IPv6 one. Transition formats that merely route
 * to a public IPv4 host (NAT64, 6to4) stay unicast; the deprecated ones never are.
 */
function classifyEmbedded(value: number, deprecated: boolean): AddressClass {
  const cls = classifyV4(value);
  return deprecated && cls === 'unicast' ? 'reserved' : cls;
}

function classifyV6(g: readonly number[]): AddressClass {
  const zeroUpTo = (n: number) => g.slice(0, n).every((x) => x === 0);
  const v4At = (i: number) => ((g[i]! << 16) | g[i + 1]!) >>> 0;
  if (METADATA_V6.has(formatIPv6(g))) return 'metadata';
  if (zeroUpTo(8)) return 'unspecified';
  if (zeroUpTo(7) && g[7] === 1) return 'loopback';
  if (zeroUpTo(5) && g[5] === 0xffff) return classifyV4(v4At(6)); // ::ffff:a.b.c.d, IPv4-mapped
  if (zeroUpTo(4) && g[4] === 0xffff && g[5] === 0) return classifyEmbedded(v4At(6), true); // ::ffff:0:a.b.c.d (SIIT)
  if (zeroUpTo(6)) return classifyEmbedded(v4At(6), true); // ::a.b.c.d, IPv4-compatible (deprecated)
  if (g[0] === 0x64 && g[1] === 0xff9b) {
    if (g.slice(2, 6).every((x) => x === 0)) return classifyV4(v4At(6)); // NAT64 well-known prefix /96
    if (g[2] === 1) return 'private'; // 64:ff9b:1::/48 local-use NAT64: embedding position is site-specific
    return 'reserved';
  }
  if (g[0] === 0x100 && g[1] === 0 && g[2] === 0 && g[3] === 0) return 'reserved'; // 100::/64 discard
  if (g[0] === 0x2001 && g[1]! < 0x200) return 'reserved'; // 2001::/23: Teredo, benchmarking, ORCHID...
  if (g[0] === 0x2001 && g[1] === 0xdb8) return 'reserved'; // documentation
  if (g[0] === 0x2002) return classifyEmbedded(v4At(1), false); // 6to4 carries the IPv4 router in bits 16-47
  if (g[0] === 0x3fff && g[1]! < 0x1000) return 'reserved'; // 3fff::/20 documentation
  if (g[0] === 0x5f00) return 'reserved'; // SRv6 SIDs
  if ((g[0]! & 0xfe00) === 0xfc00) return 'private'; // unique local
  if ((g[0]! & 0xffc0) === 0xfe80) return 'link-local';
  if ((g[0]! & 0xffc0) === 0xfec0) return 'private'; // deprecated site-local
  if ((g[0]! & 0xff00) === 0xff00) return 'multicast';
  if ((g[0]! & 0xe000) === 0x2000) return 'unicast'; // 2000::/3 is all the global unicast there is
  return 'reserved';
}

/**
 * The class of a literal IP address as the OS or DNS hands it over (`1.2.3.4`, `::1`,
 * `::ffff:1.2.3.4`, any valid IPv6 spelling; a `%zone` suffix is ignored). Anything else,
 * including URL-style forms like `0x7f.1` or `[::1]`, is 'invalid': see `parseHostLiteral`.
 */
export function classifyAddress(ip: string): AddressClass {
  if (typeof ip !== 'string') return 'invalid';
  const v4 = dottedToNumber(ip);
  if (v4 !== null) return classifyV4(v4);
  // A zone only says which interface to use; the address alone decides what it reaches.
  const zone = ip.indexOf('%');
  const groups = parseIPv6(zone < 0 ? ip : ip.slice(0, zone));
  return groups ? classifyV6(groups) : 'invalid';
}

/** Whether a resolved address may be connected to. Without `denyPrivate`, everything may. */
export function isEgressAllowed(ip: string, policy: EgressPolicy): boolean {
  return !policy.denyPrivate || classifyAddress(ip) === 'unicast';
}

// ---------------------------------------------------------------------------------------------
// IPv6 text <-> groups

/** Eight 16-bit groups of a valid IPv6 text (no zone), or null. */
function parseIPv6(text: string): number[] | null {
  if (text.includes('%') || !isIPv6(text)) return null;
  let body = text;
  let tail: number[] = [];
  const lastColon = body.lastIndexOf(':');
  if (body.indexOf('.', lastColon) >= 0) {
    const v4 = dottedToNumber(body.slice(lastColon + 1));
    if (v4 === null) return null;
    tail = [v4 >>> 16, v4 & 0xffff];
    body = body.slice(0, lastColon + 1);
    if (!body.endsWith('::')) body = body.slice(0, -1);
  }
  const hex = (part: string) => (/^[0-9a-fA-F]{1,4}$/.test(part) ? Number.parseInt(part, 16) : Number.NaN);
  const split = (part: string) => (part === '' ? [] : part.split(':').map(hex));
  const gap = body.indexOf('::');
  let groups: number[];
  if (gap < 0) {
    groups = [...split(body), ...tail];
  } else {
    const head = split(body.slice(0, gap));
    const rest = split(body.slice(gap + 2));
    const fill = 8 - head.length - rest.length - tail.length;
    if (fill < 1) return null;
    groups = [...head, ...new Array<number>(fill).fill(0), ...rest, ...tail];
  }
  return groups.length === 8 && groups.every((x) => Number.isInteger(x)) ? groups : null;
}

/** RFC 5952 / WHATWG serialisation: lowercase, first longest run of 2+ zero groups as `::`. */
function formatIPv6(groups: readonly number[]): string {
  let bestStart = -1;
  let bestLength = 1;
  for (let i = 0; i < 8; ) {
    if (groups[i] !== 0) {
      i++;
      continue;
    }
    let j = i;
    while (j < 8 && groups[j] === 0) j++;
    if (j - i > bestLength) [bestStart, bestLength] = [i, j - i];
    i = j;
  }
  const hex = (list: readonly number[]) => list.map((x) => x.toString(16)).join(':');
  if (bestStart < 0) return hex(groups);
  return `${hex(groups.slice(0, bestStart))}::${hex(groups.slice(bestStart + bestLength))}`;
}

// ---------------------------------------------------------------------------------------------
// Host parsing (what a URL's host may contain)

export type ParsedHost =
  | { kind: 'ip'; family: 4 | 6; ip: string }
  | { kind: 'name'; name: string }
  | { kind: 'invalid'; reason: string };

/** Thrown by `parseHostLiteral` for a host that is neither an IP literal nor a DNS name. */
export class InvalidHostError extends Error {
  readonly code = 'EINVALIDHOST';
  constructor(host: string, reason: string) {
    super(`invalid host ${JSON.stringify(host)}: ${reason}`);
    this.name = 'InvalidHostError';
  }
}

/** WHATWG forbidden domain code points (after percent-decoding). */
const FORBIDDEN_DOMAIN = /[\u0000-\u0020\u007f#%/:<>?@[\\\]^|]/;

/** One WHATWG "IPv4 number": decimal, 0x-hex (digits may be empty) or 0-prefixed octal. */
function parseIPv4Number(part: string): number | null {
  if (part === '') return null;
  let radix = 10;
  let digits = part;
  if (/^0x/i.test(part)) [radix, digits] = [16, part.slice(2)];
  else if (part.length > 1 && part.startsWith('0')) [radix, digits] = [8, part.slice(1)];
  if (digits === '') return 0;
  const valid = radix === 16 ? /^[0-9a-f]+$/i : radix === 8 ? /^[0-7]+$/ : /^[0-9]+$/;
  // parseInt is exact below 2^53, and anything above 2^32 is refused anyway.
  return valid.test(digits) ? Number.parseInt(digits, radix) : null;
}

/** WHATWG "ends in a number": such a host must be IPv4 or the URL is invalid. */
function endsInNumber(host: string): boolean {
  const parts = host.split('.');
  if (parts.at(-1) === '' && parts.length > 1) parts.pop();
  const last = parts.at(-1)!;
  return (last !== '' && /^[0-9]+$/.test(last)) || (/^0x/i.test(last) && parseIPv4Number(last) !== null);
}

/** WHATWG IPv4 parser (the inet_aton forms: `2130706433`, `0177.0.0.1`, `0x7f.1`, `127.1`). */
function parseIPv4Whatwg(host: string): number | null {
  const parts = host.split('.');
  if (parts.at(-1) === '' && parts.length > 1) parts.pop();
  if (parts.length > 4) return null;
  const numbers = parts.map(parseIPv4Number);
  if (numbers.some((n) => n === null)) return null;
  const last = numbers.pop()!;
  if (numbers.some((n) => n! > 255) || last >= 256 ** (4 - numbers.length)) return null;
  return numbers.reduce<number>((acc, n, i) => acc + n! * 256 ** (3 - i), last);
}

/** Our own reading of a non-bracketed host, without IDNA: used to double-check the WHATWG one. */
function ownHostReading(host: string): ParsedHost {
  let decoded: string;
  try {
    decoded = decodeURIComponent(host);
  } catch {
    return { kind: 'invalid', reason: 'bad percent-encoding' };
  }
  // The parts of IDNA mapping that matter to digits and dots: fullwidth forms and ideographic stops.
  const mapped = decoded.normalize('NFKC').replace(/[\u3002\uff0e\uff61]/g, '.').toLowerCase();
  if (FORBIDDEN_DOMAIN.test(mapped)) return { kind: 'invalid', reason: 'forbidden character' };
  if (!endsInNumber(mapped)) return { kind: 'name', name: mapped };
  const value = parseIPv4Whatwg(mapped);
  if (value === null) return { kind: 'invalid', reason: 'ends in a number but is not IPv4' };
  return { kind: 'ip', family: 4, ip: numberToDotted(value) };
}

/**
 * Reads a URL host (or a bare IPv6 address) the way the WHATWG URL parser does, cross-checked
 * with an independent parser; where the two disagree the host is invalid (fail closed).
 */
export function parseHost(host: string): ParsedHost {
  if (typeof host !== 'string' || host === '') return { kind: 'invalid', reason: 'empty host' };
  const bracketed = host.startsWith('[');
  if (bracketed || host.includes(':')) {
    const inner = bracketed ? (host.endsWith(']') ? host.slice(1, -1) : null) : host;
    if (inner === null) return { kind: 'invalid', reason: 'unterminated IPv6 literal' };
    // WHATWG URLs have no zone ids; a scoped address only makes sense on this machine's links.
    if (inner.includes('%')) return { kind: 'invalid', reason: 'IPv6 zone ids are not allowed' };
    const groups = parseIPv6(inner);
    if (!groups) return { kind: 'invalid', reason: bracketed ? 'not an IPv6 address' : 'unexpected ":"' };
    const ip = formatIPv6(groups);
    if (domainToASCII(`[${inner}]`) !== `[${ip}]`) return { kind: 'invalid', reason: 'IPv6 parsers disagree' };
    return { kind: 'ip', family: 6, ip };
  }
  const whatwg = domainToASCII(host); // the WHATWG host parser: '' means failure
  const own = ownHostReading(host);
  if (whatwg === '') return { kind: 'invalid', reason: own.kind === 'invalid' ? own.reason : 'not a valid host' };
  if (isIPv4(whatwg)) {
    if (own.kind === 'ip' && own.ip !== whatwg) return { kind: 'invalid', reason: 'IPv4 parsers disagree' };
    return { kind: 'ip', family: 4, ip: whatwg };
  }
  if (own.kind !== 'name') return { kind: 'invalid', reason: 'IPv4 parsers disagree' };
  return { kind: 'name', name: whatwg };
}

/**
 * The canonical IP literal a URL host stands for (`0x7f.1` -> `127.0.0.1`, `[::FFFF:7f00:1]` ->
 * `::ffff:7f00:1`, IPv6 without brackets), or null for a DNS name.
 * @throws InvalidHostError for anything else (zone ids, `1.2.3.256`, forbidden characters...).
 */
export function parseHostLiteral(host: string): string | null {
  const parsed = parseHost(host);
  if (parsed.kind === 'invalid') throw new InvalidHostError(host, parsed.reason);
  return parsed.kind === 'ip' ? parsed.ip : null;
}

/** `localhost` and `*.localhost` are loopback by definition (RFC 6761), whatever DNS says. */
function isLocalhostName(name: string): boolean {
  const bare = name.endsWith('.') ? name.slice(0, -1) : name;
  return bare === 'localhost' || bare.endsWith('.localhost');
}

export type LiteralHostCheck =
  | { allowed: boolean; kind: 'ip'; ip: string; addressClass: AddressClass }
  /** A DNS name: connect through `createGuardedLookup`, which decides on the resolved address. */
  | { allowed: boolean; kind: 'name'; name: string; addressClass: AddressClass | null }
  | { allowed: false; kind: 'invalid'; reason: string; addressClass: 'invalid' };

/**
 * The check for hosts that never reach `lookup`: run it on the URL's hostname before connecting.
 * IP literals are decided here; DNS names pass (their addresses are checked by the guarded lookup)
 * unless they are `localhost` names under `denyPrivate`. Invalid hosts are always refused.
 */
export function checkLiteralHost(hostname: string, policy: EgressPolicy): LiteralHostCheck {
  const parsed = parseHost(hostname);
  if (parsed.kind === 'invalid') return { allowed: false, kind: 'invalid', reason: parsed.reason, addressClass: 'invalid' };
  if (parsed.kind === 'ip') {
    return { allowed: isEgressAllowed(parsed.ip, policy), kind: 'ip', ip: parsed.ip, addressClass: classifyAddress(parsed.ip) };
  }
  const local = isLocalhostName(parsed.name);
  return { allowed: !(policy.denyPrivate && local), kind: 'name', name: parsed.name, addressClass: local ? 'loopback' : null };
}

// ---------------------------------------------------------------------------------------------
// Guarded DNS lookup

export type LookupCallback = (error: NodeJS.ErrnoException | null, address: string | LookupAddress[], family?: number) => void;
/** The shape `net.connect` / `http.Agent` call their `lookup` option with. */
export type LookupFunction = (hostname: string, options: LookupOptions, callback: LookupCallback) => void;

/** What a guarded lookup fails with when a resolved address is denied. */
export class EgressDeniedError extends Error {
  readonly code = 'EGRESS_DENIED';
  readonly hostname: string;
  readonly address: string;
  readonly addressClass: AddressClass;
  constructor(hostname: string, address: string, addressClass: AddressClass) {
    super(`${hostname} resolves to ${address} (${addressClass}), which the data source proxy may not connect to`);
    this.name = 'EgressDeniedError';
    this.hostname = hostname;
    this.address = address;
    this.addressClass = addressClass;
  }
}

/**
 * A `dns.lookup` replacement for the proxy's agents: it resolves with `lookup`, then fails with
 * `code: 'EGRESS_DENIED'` if any resolved address is denied. The whole answer is refused rather
 * than filtered, so which address gets used never depends on family order or happy eyeballs.
 * Handles `all: true` (what net.connect asks for with autoSelectFamily) and the single form,
 * and also the `(hostname, family, cb)` / `(hostname, cb)` call styles of `dns.lookup`.
 *
 * net.connect does not call `lookup` for IP literal hosts: check those with `checkLiteralHost`.
 */
export function createGuardedLookup(policy: EgressPolicy, lookup: LookupFunction = dnsLookup): LookupFunction {
  return (hostname: string, ...rest: unknown[]): void => {
    const callback = rest.at(-1) as LookupCallback;
    const raw = rest.length > 1 ? rest[0] : undefined;
    const options: LookupOptions = typeof raw === 'number' ? { family: raw } : ((raw as LookupOptions | undefined) ?? {});
    const answer = (error: NodeJS.ErrnoException | null, address: string | LookupAddress[], family?: number) =>
      process.nextTick(callback, error, address, family);
    const resolved = (error: NodeJS.ErrnoException | null, address: string | LookupAddress[], family?: number) => {
      if (error) return answer(error, options.all ? [] : '', undefined);
      const list: LookupAddress[] = Array.isArray(address) ? address : [{ address, family: family ?? (isIPv6(address) ? 6 : 4) }];
      for (const entry of list) {
        if (!isEgressAllowed(entry.address, policy)) {
          return answer(new EgressDeniedError(hostname, entry.address, classifyAddress(entry.address)), options.all ? [] : '', undefined);
        }
      }
      if (options.all) return answer(null, list);
      if (list.length === 0) return answer(Object.assign(new Error(`${hostname} has no address`), { code: 'ENOTFOUND' }), '', undefined);
      answer(null, list[0]!.address, list[0]!.family);
    };
    try {
      lookup(hostname, options, resolved);
    } catch (error) {
      answer(error as NodeJS.ErrnoException, options.all ? [] : '', undefined);
    }
  };
}

// ---------------------------------------------------------------------------------------------
// [security] data_source_proxy_whitelist

const DEFAULT_PORTS: Record<string, string> = { 'http:': '80', 'https:': '443', http: '80', https: '443' };

/** host[:port] split, with IP literals in canonical form so equal addresses compare equal. */
function splitHostPort(value: string): { host: string; port: string } {
  let host = value;
  let port = '';
  const close = value.lastIndexOf(']');
  const colon = value.lastIndexOf(':');
  if (value.startsWith('[') ? colon > close : colon >= 0 && colon === value.indexOf(':')) {
    host = value.slice(0, colon);
    port = value.slice(colon + 1);
  }
  const parsed = parseHost(host);
  if (parsed.kind === 'ip') return { host: parsed.family === 6 ? `[${parsed.ip}]` : parsed.ip, port };
  return { host: parsed.kind === 'name' ? parsed.name : host.toLowerCase(), port };
}

/**
 * Grafana's `[security] data_source_proxy_whitelist` check: `hostPort` is the data source URL's
 * `host[:port]`, entries are `host:port`, and an empty whitelist allows everything. Grafana
 * compares Go's raw `URL.Host`; here host names compare case-insensitively and IP literals in
 * canonical form. WHATWG URLs drop default ports, so pass the URL's `scheme` to let
 * `host` and `host:80` (http) / `host:443` (https) match each other. An empty host never matches.
 */
export function hostWhitelisted(hostPort: string, whitelist: readonly string[], scheme?: string): boolean {
  if (whitelist.length === 0) return true;
  if (!hostPort) return false;
  const fallback = scheme ? (DEFAULT_PORTS[scheme.toLowerCase()] ?? '') : '';
  const target = splitHostPort(hostPort);
  const targetPort = target.port || fallback;
  return whitelist.some((entry) => {
    const listed = splitHostPort(entry.trim());
    return listed.host === target.host && (listed.port || fallback) === targetPort;
  });
}
