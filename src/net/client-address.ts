import { BlockList, isIP } from 'node:net';

// A leaf module (nothing of the app imported): settings validate `[server] trusted_proxies` with
// it, and authentication finds the client address with it.

/**
 * Which peers may name the client address in `X-Forwarded-For` (`[server] trusted_proxies`):
 * addresses and CIDR ranges, IPv4 or IPv6. Anyone else's header is ignored, since a client can
 * write whatever it likes there.
 */
export class TrustedProxies {
  readonly #list = new BlockList();
  readonly empty: boolean;

  /** Throws, naming the entry, when one is neither an address nor a CIDR range. */
  constructor(entries: readonly string[]) {
    for (const entry of entries) {
      const slash = entry.indexOf('/');
      const address = normalizeAddress(slash < 0 ? entry : entry.slice(0, slash));
      const family = isIP(address);
      const prefix = slash < 0 ? null : entry.slice(slash + 1);
      const bits = family === 4 ? 32 : 128;
      if (family === 0 || (prefix !== null && !(/^\d{1,3}$/.test(prefix) && Number(prefix) <= bits))) {
        throw new Error(`"${entry}" is neither an IP address nor a CIDR range`);
      }
      const type = family === 4 ? 'ipv4' : 'ipv6';
      if (prefix === null) this.#list.addAddress(address, type);
      else this.#list.addSubnet(address, Number(prefix), type);
    }
    this.empty = entries.length === 0;
  }

  has(address: string): boolean {
    const family = isIP(address);
    return family !== 0 && this.#list.check(address, family === 4 ? 'ipv4' : 'ipv6');
  }
}

/** One spelling per address: IPv4-mapped IPv6 (`::ffff:127.0.0.1`, as dual-stack sockets report it) as IPv4, IPv6 lower-case. */
export function normalizeAddress(address: string): string {
  if (address.includes(':')) {
    const lower = address.toLowerCase();
    const mapped = lower.startsWith('::ffff:') ? lower.slice(7) : '';
    return isIP(mapped) === 4 ? mapped : lower;
  }
  return address;
}

/**
 * The client's address: the connection's peer, unless that is a trusted proxy; then the
 * `X-Forwarded-For` entries are read from the right (each proxy appends the address it was called
 * from) and the first one that is not itself a trusted proxy is the client. An entry that is no
 * address (or address:port) ends the walk at the last address known, so a malformed header can
 * only ever name a trusted proxy, never an address of the sender's choosing.
 */
export function clientAddress(peer: string, forwardedFor: string | readonly string[] | undefined, trusted: TrustedProxies): string {
  let client = normalizeAddress(peer);
  if (trusted.empty || forwardedFor === undefined || !trusted.has(client)) return client;
  const hops = (typeof forwardedFor === 'string' ? forwardedFor : forwardedFor.join(',')).split(',');
  for (let i = hops.length - 1; i >= 0; i--) {
    const hop = parseHop(hops[i]!);
    if (hop === null) return client;
    client = hop;
    if (!trusted.has(hop)) return hop;
  }
  return client;
}

/** `1.2.3.4`, `1.2.3.4:5678`, `2001:db8::1`, `[2001:db8::1]` or `[2001:db8::1]:443`, as an address; null for anything else. */
function parseHop(raw: string): string | null {
  let value = raw.trim();
  if (value.startsWith('[')) {
    const end = value.indexOf(']');
    if (end < 0 || !/^(?::\d{1,5})?$/.test(value.slice(end + 1))) return null;
    value = value.slice(1, end);
    return isIP(value) === 6 ? normalizeAddress(value) : null;
  }
  const v4WithPort = /^(\d{1,3}(?:\.\d{1,3}){3}):\d{1,5}$/.exec(value);
  if (v4WithPort) value = v4WithPort[1]!;
  return isIP(value) === 0 ? null : normalizeAddress(value);
}

/**
 * What brute-force limits count a client address under: an IPv4 address as it is, an IPv6 one as
 * its /64 (`2001:db8:1:2::/64`). One subscriber, host or LAN usually gets a whole /64, so keyed by
 * the full address every guess could come from a fresh address with a fresh budget.
 */
export function limiterKey(address: string): string {
  if (isIP(address) !== 6) return address;
  const groups = ipv6Groups(address);
  if (!groups) return address;
  return `${groups.slice(0, 4).map((g) => g.toString(16)).join(':')}::/64`;
}

/** The eight 16-bit groups of an IPv6 address (a zone and an embedded IPv4 tail allowed), or null. */
function ipv6Groups(address: string): number[] | null {
  let text = address.split('%')[0]!.toLowerCase();
  const v4 = /(\d{1,3})\.(\d{1,3})\.(\d{1,3})\.(\d{1,3})$/.exec(text);
  if (v4) {
    const [a, b, c, d] = v4.slice(1).map(Number) as [number, number, number, number];
    text = `${text.slice(0, v4.index)}${((a << 8) | b).toString(16)}:${((c << 8) | d).toString(16)}`;
  }
  const halves = text.split('::');
  if (halves.length > 2) return null;
  const parse = (part: string) => (part === '' ? [] : part.split(':').map((g) => Number.parseInt(g, 16)));
  const head = parse(halves[0]!);
  const tail = halves.length === 2 ? parse(halves[1]!) : [];
  const missing = 8 - head.length - tail.length;
  if (missing < 0 || (halves.length === 1 && missing !== 0) || [...head, ...tail].some((g) => Number.isNaN(g))) return null;
  return [...head, ...Array<number>(halves.length === 2 ? missing : 0).fill(0), ...tail];
}
