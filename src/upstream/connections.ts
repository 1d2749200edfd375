import { Agent } from 'node:http';
import type { Settings } from '../config/settings.ts';
import { MESSAGES } from '../errors/messages.ts';
import type { Logger } from '../logging/logger.ts';
import { VERSION } from '../version.ts';
import { userAgentFor } from './headers.ts';
import { IdleLimitedAgent, IdleLimitedHttpsAgent, IdleSockets } from './idle-agents.ts';
import { checkLiteralHost, createGuardedLookup, hostWhitelisted, type EgressPolicy, type LookupFunction } from './address.ts';
import type { UpstreamBase } from './target.ts';

/**
 * How every outbound call to a data source is made, whoever makes it (the proxy, the health
 * checks): keep-alive agents whose lookup checks each address a connection is about to use against
 * the egress policy, the whitelist and literal-address verdict, and the user agent. One set per
 * process, so every caller shares the pool and the policy.
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
  agentFor(upstream: UpstreamBase): Agent;
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
  const idle = new IdleSockets(dataproxy.idleConnTimeoutSeconds * 1000, agentOptions.keepAliveMsecs);
  const http = new IdleLimitedAgent(agentOptions, idle);
  const https = new IdleLimitedHttpsAgent(agentOptions, idle);
  idle.sweep([http, https]);
  const { userAgent, invalid } = userAgentFor(dataproxy.userAgent, VERSION);
  if (invalid) log.warn({ component: 'dataproxy' }, '[dataproxy] user_agent is not a valid header value; using the default');
  return {
    policy,
    userAgent,
    verdict(upstream) {
      if (!hostWhitelisted(upstream.host, whitelist, upstream.protocol)) return MESSAGES.proxy.whitelist;
      return checkLiteralHost(upstream.hostname, policy).allowed ? null : MESSAGES.proxy.addressDenied;
    },
    agentFor(upstream) {
      return upstream.protocol === 'https:' ? https : http;
    },
    destroy() {
      idle.stop();
      http.destroy();
      https.destroy();
    },
  };
}
