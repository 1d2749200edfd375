import { request } from 'node:http';
import { request as httpsRequest } from 'node:https';
import type { EntityManager } from '@mikro-orm/postgresql';
import type { Settings } from '../config/settings.ts';
import type { Logger } from '../logging/logger.ts';
import type { DataSourceHealth, DataSourceHealthChecker } from '../services/data-source-health.ts';
import type { DataSourceService } from '../services/data-sources.ts';
import type { DataSourceCaller } from '../services/data-source-permissions.ts';
import { DomainError, forbidden } from '../errors/domain.ts';
import { MESSAGES } from '../errors/messages.ts';
import { checkFor, callsNothing, ProbeError, type ProbeContext, type ProbeRequest, type ProbeResponse } from './health-checks.ts';
import { joinUpstreamPath } from './policy/path.ts';
import { prepareTarget, type ProxyTarget } from './target.ts';
import type { UpstreamConnections } from './upstream.ts';

/** The address resolved to one the proxy may not call: answered as the proxy answers it. */
class ProbeDenied extends Error {}

/** Answer bodies beyond this are not read for a health verdict (nor is more than `[dataproxy] response_limit`). */
const BODY_LIMIT = 1 << 20;
const STATUS_TEXT: Record<number, string> = {
  400: 'Bad Request', 401: 'Unauthorized', 403: 'Forbidden', 404: 'Not Found', 405: 'Method Not Allowed', 408: 'Request Timeout',
  429: 'Too Many Requests', 500: 'Internal Server Error', 502: 'Bad Gateway', 503: 'Service Unavailable', 504: 'Gateway Timeout',
};

/**
 * `GET /api/datasources/[uid/]:ref/health`: loads the data source, prepares it exactly as the proxy
 * does (its URL, its credentials and custom headers), applies the proxy's whitelist and address
 * verdicts, then runs its kind's check over the proxy's connections (whose lookup refuses denied
 * addresses as they resolve) within the data source's timeout or `[dataproxy] timeout`.
 */
export function createHealthChecker(settings: Settings, dataSources: DataSourceService, connections: UpstreamConnections, log: Logger): DataSourceHealthChecker {
  const dataproxy = settings.dataproxy;
  const bodyLimit = dataproxy.responseLimit > 0 ? Math.min(dataproxy.responseLimit, BODY_LIMIT) : BODY_LIMIT;

  return {
    async check(em: EntityManager, caller: DataSourceCaller, ref: { id: number } | { uid: string }): Promise<DataSourceHealth> {
      const row = await dataSources.getFor(em, caller, ref, 'query');
      let secrets: Record<string, string>;
      try {
        secrets = dataSources.decryptSecrets(row);
      } catch {
        log.warn({ component: 'dataproxy', dsId: row.id }, 'data source secrets unreadable');
        return { status: 'ERROR', message: MESSAGES.health.secretsUnreadable };
      }
      const target = prepareTarget(row, secrets);
      const check = checkFor(row.type);
      if (check && callsNothing(check)) return check({ jsonData: {}, database: '', secrets: {}, send: () => Promise.reject(new Error('no call')) });
      const denied = target.upstream ? connections.verdict(target.upstream) : null;
      // The original refuses a data source outside the whitelist before its plugin runs, whatever its kind.
      if (denied === MESSAGES.proxy.whitelist) throw forbidden(MESSAGES.health.accessDenied);
      if (!check) return { status: 'UNKNOWN', message: MESSAGES.health.notImplemented };
      if (!target.upstream) return { status: 'ERROR', message: MESSAGES.proxy.invalidUrl(target.rawUrl) };
      if (denied) throw forbidden(denied);

      const call: CallOptions = {
        connections,
        timeoutMs: (target.timeoutSeconds ?? dataproxy.timeoutSeconds) * 1000,
        dialTimeoutMs: dataproxy.dialTimeoutSeconds * 1000,
        bodyLimit,
      };
      const context: ProbeContext = {
        jsonData: row.jsonData ?? {},
        database: row.database,
        secrets,
        send: (probe) => callUpstream(target, probe, call),
      };
      try {
        return await check(context);
      } catch (error) {
        if (error instanceof ProbeDenied) throw forbidden(MESSAGES.proxy.addressDenied);
        if (error instanceof DomainError) throw error;
        // A check must come back with a verdict; anything unforeseen is an ERROR, never a 500.
        log.warn({ err: error, component: 'dataproxy', dsId: row.id }, 'data source health check failed unexpectedly');
        return { status: 'ERROR', message: MESSAGES.health.unexpected((error as Error).message) };
      }
    },
  };
}

interface CallOptions {
  connections: UpstreamConnections;
  timeoutMs: number;
  dialTimeoutMs: number;
  bodyLimit: number;
}

/** One request to the data source, with the headers the proxy would send it; rejects with `ProbeError`. */
function callUpstream(target: ProxyTarget, probe: ProbeRequest, options: CallOptions): Promise<ProbeResponse> {
  const upstream = target.upstream!;
  const path = joinUpstreamPath(upstream.basePath, probe.path) + (probe.query ? `?${probe.query}` : '');
  const url = `${upstream.protocol}//${upstream.host}${path}`;
  const headers: Record<string, string> = { host: upstream.host, 'user-agent': options.connections.userAgent, accept: 'application/json' };
  for (const [name, value] of target.headers) headers[name] = value;
  for (const [name, value] of Object.entries(probe.headers ?? {})) headers[name.toLowerCase()] = value;
  if (probe.body !== undefined) headers['content-length'] = String(Buffer.byteLength(probe.body));
  const failed = (text: string) => new ProbeError(`${probe.method === 'GET' ? 'Get' : 'Post'} "${url}": ${text}`);

  return new Promise<ProbeResponse>((resolve, reject) => {
    let settled = false;
    const finish = (outcome: () => void) => {
      if (settled) return;
      settled = true;
      clearTimeout(deadline);
      clearTimeout(dialTimer);
      outcome();
    };
    const send = upstream.protocol === 'https:' ? httpsRequest : request;
    const req = send({
      method: probe.method,
      protocol: upstream.protocol,
      hostname: upstream.hostname.replace(/^\[|\]$/g, ''),
      port: upstream.port || undefined,
      path,
      headers,
      agent: options.connections.agentFor(upstream) as never,
    });
    let dialTimer: NodeJS.Timeout | undefined;
    const deadline = setTimeout(() => {
      finish(() => reject(failed(`timeout after ${options.timeoutMs / 1000}s awaiting the data source's answer (Client.Timeout exceeded)`)));
      req.destroy();
    }, options.timeoutMs);
    req.on('socket', (socket) => {
      if (!socket.connecting) return;
      dialTimer = setTimeout(() => {
        finish(() => reject(failed(`dial tcp ${upstream.host}: i/o timeout`)));
        req.destroy();
      }, options.dialTimeoutMs);
      socket.once('connect', () => clearTimeout(dialTimer));
    });
    req.on('error', (error: NodeJS.ErrnoException) => {
      if (error.code === 'EGRESS_DENIED') return finish(() => reject(new ProbeDenied()));
      finish(() => reject(failed(describeNetworkError(error, upstream.host))));
    });
    req.on('response', (res) => {
      const chunks: Buffer[] = [];
      let size = 0;
      res.on('data', (chunk: Buffer) => {
        size += chunk.length;
        if (size > options.bodyLimit) {
          finish(() => reject(failed(`response body larger than ${options.bodyLimit} bytes`)));
          res.destroy();
          return;
        }
        chunks.push(chunk);
      });
      res.on('error', (error: NodeJS.ErrnoException) => finish(() => reject(failed(describeNetworkError(error, upstream.host)))));
      res.on('end', () => {
        const status = res.statusCode ?? 0;
        finish(() => resolve({
          status,
          statusLine: `${status} ${res.statusMessage || STATUS_TEXT[status] || ''}`.trim(),
          headers: res.headers,
          body: Buffer.concat(chunks).toString('utf8'),
        }));
      });
    });
    req.end(probe.body);
  });
}

function describeNetworkError(error: NodeJS.ErrnoException, host: string): string {
  const { address, port } = error as NodeJS.ErrnoException & { address?: string; port?: number };
  const target = address ? (address.includes(':') ? `[${address}]:${port}` : `${address}:${port}`) : host;
  switch (error.code) {
    case 'ECONNREFUSED':
      return `dial tcp ${target}: connect: connection refused`;
    case 'ENOTFOUND':
    case 'EAI_AGAIN':
      return `dial tcp: lookup ${host.replace(/:\d+$/, '')}: no such host`;
    case 'EHOSTUNREACH':
    case 'ENETUNREACH':
      return `dial tcp ${target}: connect: no route to host`;
    case 'ETIMEDOUT':
      return `dial tcp ${target}: i/o timeout`;
    case 'ECONNRESET':
      return 'read: connection reset by peer';
    case 'HPE_INVALID_CONSTANT':
    case 'HPE_INVALID_VERSION':
    case 'HPE_INVALID_STATUS':
      return 'malformed HTTP response';
    default:
      return error.message;
  }
}
