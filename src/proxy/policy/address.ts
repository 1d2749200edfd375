import { lookup as dnsLookup, type LookupAddress, type LookupOptions } from 'node:dns';
import { BlockList, isIP } from 'node:net';

/** Where a proxied call may connect to. */
export interface EgressPolicy {
  /** Deny everything but public unicast (loopback, private, link-local, metadata, multicast...). */
  denyPrivate: boolean;
}

export const EGRESS_MESSAGES = {
  whitelist: 'Data proxy hostname and ip are not included in whitelist',
  denied: 'Data proxy target address is not allowed',
} as const;

/** Ranges that are not public unicast; an IPv4-mapped IPv6 address is checked as its IPv4 form. */
const NON_PUBLIC = new BlockList();
for (const [net, prefix] of [
  ['0.0.0.0', 8], ['10.0.0.0', 8], ['100.64.0.0', 10], ['127.0.0.0', 8], ['169.254.0.0', 16], ['172.16.0.0', 12],
  ['192.0.0.0', 24], ['192.0.2.0', 24], ['192.88.99.0', 24], ['192.168.0.0', 16], ['198.18.0.0', 15], ['198.51.100.0', 24],
  ['203.0.113.0', 24], ['224.0.0.0', 4], ['240.0.0.0', 4],
] as const) NON_PUBLIC.addSubnet(net, prefix, 'ipv4');
for (const [net, prefix] of [
  ['::', 128], ['::1', 128], ['64:ff9b:1::', 48], ['100::', 64], ['2001::', 23], ['2001:db8::', 32], ['2002::', 16],
  ['fc00::', 7], ['fe80::', 10], ['fec0::', 10], ['ff00::', 8],
] as const) NON_PUBLIC.addSubnet(net, prefix, 'ipv6');

/** The IPv4 address embedded in an IPv4-mapped (::ffff:a.b.c.d) or NAT64 (64:ff9b::/96) IPv6 address. */
function embeddedIPv4(ip: string): string | null {
  const lower = ip.toLowerCase();
  const match = /^(?:::ffff:|64:ff9b::)(?:(\d+\.\d+\.\d+\.\d+)|([0-9a-f]{1,4}):([0-9a-f]{1,4}))$/.exec(lower);
  if (!match) return null;
  if (match[1]) return match[1];
  const hi = Number.parseInt(match[2]!, 16);
  const lo = Number.parseInt(match[3]!, 16);
  return `${hi >> 8}.${hi & 0xff}.${lo >> 8}.${lo & 0xff}`;
}

/** True for a public unicast address (what `denyPrivate` lets through). */
export function isPublicUnicast(ip: string): boolean {
  const family = isIP(ip);
  if (family === 0) return false;
  if (family === 6) {
    const v4 = embeddedIPv4(ip);
    if (v4) return isPublicUnicast(v4);
    return !NON_PUBLIC.check(ip, 'ipv6');
  }
  return !NON_PUBLIC.check(ip, 'ipv4') && ip !== '255.255.255.255';
}

export function isEgressAllowed(ip: string, policy: EgressPolicy): boolean {
  return !policy.denyPrivate || isPublicUnicast(ip);
}

/** An error a guarded lookup fails with; the proxy answers 403. */
export class EgressDeniedError extends Error {
  readonly code = 'EGRESS_DENIED';
}

type LookupCallback = (error: NodeJS.ErrnoException | null, address: string | LookupAddress[], family?: number) => void;

/**
 * A `dns.lookup` replacement for the proxy's agent: it resolves, then refuses any address the
 * policy denies. The check is on the address actually connected to, so a name that resolves to a
 * public address first and a private one later (DNS rebinding) is still caught.
 */
export function createGuardedLookup(policy: EgressPolicy, lookup: typeof dnsLookup = dnsLookup) {
  return (hostname: string, options: LookupOptions, callback: LookupCallback): void => {
    lookup(hostname, { ...options, all: true }, (error, addresses) => {
      if (error) return callback(error, []);
      const list = addresses as LookupAddress[];
      const allowed = list.filter((a) => isEgressAllowed(a.address, policy));
      if (allowed.length === 0) return callback(new EgressDeniedError(`${hostname} resolves only to denied addresses`), []);
      if (options.all) return callback(null, allowed);
      callback(null, allowed[0]!.address, allowed[0]!.family);
    });
  };
}

/** A literal IP host never goes through lookup, so it is checked before connecting. */
export function literalHostAllowed(hostname: string, policy: EgressPolicy): boolean {
  const bare = hostname.startsWith('[') && hostname.endsWith(']') ? hostname.slice(1, -1) : hostname;
  return isIP(bare) === 0 || isEgressAllowed(bare, policy);
}

/** `[security] data_source_proxy_whitelist`: `host:port` entries; an empty list allows everything. */
export function hostWhitelisted(hostPort: string, whitelist: readonly string[]): boolean {
  return whitelist.length === 0 || whitelist.includes(hostPort.toLowerCase());
}
