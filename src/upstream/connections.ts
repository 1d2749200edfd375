import { Agent } from 'node:http';
import { createSecureContext } from 'node:tls';
import type { Settings } from '../config/settings.ts';
import { MESSAGES } from '../errors/messages.ts';
import type { Logger } from '../logging/logger.ts';
import { VERSION } from '../version.ts';
import { userAgentFor } from './headers.ts';
import { IdleLimitedAgent, IdleLimitedHttpsAgent, IdleSockets } from './idle-agents.ts';
import { checkLiteralHost, createGuardedLookup, hostWhitelisted, type EgressPolicy, type LookupFunction } from './address.ts';
import type { DataSourceTarget, UpstreamBase } from './target.ts';
import type { TlsMaterial } from './tls.ts';

/**
 * How every outbound call to a data source is made, whoever makes it (the proxy, the health
 * checks, queries): keep-alive agents whose lookup checks each address a connection is about to
 * use against the egress policy, the whitelist and literal-address verdict, and the user agent.
 * One set per process, so every caller shares the pools and the policy.
 *
 * Pools are keyed by what makes a connection different: plain http, https with the system's
 * trust, and one https pool per distinct TLS material (CA, client certificate and key, skip
 * verify, server name), so data sources with different client certificates never share a
 * socket. A pool is retired once no data source that used it is unchanged (`release`, called on
 * every change notification): the next call makes one from the new material.
 */
export interface UpstreamConnections {
  readonly policy: EgressPolicy;
  /** `[dataproxy] user_agent`, or `dashgate/<version>` when it is empty or unusable. */
  readonly userAgent: string;
  /**
   * The 403 message when the data source may not be called (the whitelist's, or the literal
   * address policy's), else null. Addresses from DNS are checked by the agents as they connect.
   */
  verdict(upstream: UpstreamBase): string | null;
  /** The pool for the target's scheme and TLS material (its `upstream` must be set). */
  agentFor(target: DataSourceTarget): Agent;
  /** The data source changed (or, with null, any may have): retire the TLS pools only it used. */
  release(key: { orgId: number; id: number } | null): void;
  destroy(): void;
}

export function createUpstreamConnections(settings: Settings, log: Logger, resolve?: LookupFunction): UpstreamConnections {
  const dataproxy = settings.dataproxy;
  const policy: EgressPolicy = { denyPrivate: settings.security.dataSourceProxyDenyPrivate };
  const whitelist = settings.security.dataSourceProxyWhitelist;
  const agentOptions = {
    keepAlive: true,
    keepAliveMsecs: dataproxy.keepAliveSeconds * 1000,
    // 0 means unlimited, as in the original.
    maxSockets: dataproxy.maxConnsPerHost > 0 ? dataproxy.maxConnsPerHost : Infinity,
    maxFreeSockets: dataproxy.maxIdleConnections > 0 ? dataproxy.maxIdleConnections : 256,
    scheduling: 'lifo' as const,
    // Every address a connection is about to use is checked here, DNS answer by DNS answer.
    lookup: createGuardedLookup(policy, resolve) as never,
  };
  const handshakeMs = dataproxy.tlsHandshakeTimeoutSeconds * 1000;
  const idle = new IdleSockets(dataproxy.idleConnTimeoutSeconds * 1000, agentOptions.keepAliveMsecs);
  const http = new IdleLimitedAgent(agentOptions, idle);
  const https = new IdleLimitedHttpsAgent(agentOptions, idle, handshakeMs);
  /** Every live agent, for the idle sweep. */
  const agents = new Set<Agent>([http, https]);
  /** TLS pools by material fingerprint, with the data sources (`org:id`) that used each. */
  const pools = new Map<string, { agent: IdleLimitedHttpsAgent; users: Set<string> }>();
  idle.sweep(agents);
  const retire = (fingerprint: string) => {
    const pool = pools.get(fingerprint);
    if (!pool) return;
    pools.delete(fingerprint);
    pool.agent.retire();
    // Busy sockets end with their call; the sweep forgets the agent once it has none.
    agents.delete(pool.agent);
  };
  const poolFor = (material: TlsMaterial) => {
    const agent = new IdleLimitedHttpsAgent({
      ...agentOptions,
      // Parsed once per pool rather than on every handshake.
      secureContext: createSecureContext({ ca: material.ca, cert: material.cert, key: material.key }),
      rejectUnauthorized: material.rejectUnauthorized,
      ...(material.servername ? { servername: material.servername } : {}),
    }, idle, handshakeMs);
    agents.add(agent);
    return { agent, users: new Set<string>() };
  };
  const { userAgent, invalid } = userAgentFor(dataproxy.userAgent, VERSION);
  if (invalid) log.warn({ component: 'dataproxy' }, '[dataproxy] user_agent is not a valid header value; using the default');
  return {
    policy,
    userAgent,
    verdict(upstream) {
      if (!hostWhitelisted(upstream.host, whitelist, upstream.protocol)) return MESSAGES.proxy.whitelist;
      return checkLiteralHost(upstream.hostname, policy).allowed ? null : MESSAGES.proxy.addressDenied;
    },
    agentFor(target) {
      if (target.upstream!.protocol !== 'https:') return http;
      const material = target.tls;
      if (!material) return https;
      let pool = pools.get(material.fingerprint);
      if (!pool) pools.set(material.fingerprint, (pool = poolFor(material)));
      pool.users.add(`${target.orgId}:${target.id}`);
      return pool.agent;
    },
    release(key) {
      if (key === null) {
        for (const fingerprint of [...pools.keys()]) retire(fingerprint);
        return;
      }
      const user = `${key.orgId}:${key.id}`;
      for (const [fingerprint, pool] of [...pools]) {
        if (pool.users.delete(user) && pool.users.size === 0) retire(fingerprint);
      }
    },
    destroy() {
      idle.stop();
      for (const agent of agents) agent.destroy();
      for (const pool of pools.values()) pool.agent.destroy();
      pools.clear();
    },
  };
}
