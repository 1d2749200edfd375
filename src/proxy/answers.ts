import type { IncomingMessage, ServerResponse } from 'node:http';
import { MESSAGES } from '../errors/messages.ts';
import type { Logger } from '../logging/logger.ts';
import { responseHeaders, type StreamAnswers, type UpstreamError } from '../upstream/index.ts';

/**
 * How the proxy answers its client for a streamed call, the original's client-facing rules:
 * the upstream's answer relayed with cleaned headers and under `[dataproxy] response_limit`, but a
 * 401 of the data source's as a 400 (a client would otherwise drop its own session); no answer is
 * an empty 504 on timeout and an empty 502 otherwise (the cause goes to the log, worded as Go's
 * client, without the URL whose query may hold secrets). Ours beside them: a 403 with the
 * proxy's message for an address the egress policy denies as it resolves, and a 502 with a
 * message naming the field for TLS material that does not parse.
 */
export function proxyAnswers(responseLimit: number, log: Logger): StreamAnswers {
  return {
    relay: (proxyRes, res) => relay(proxyRes, res, responseLimit),
    fail(error, res, target) {
      if (error.kind === 'denied') return json(res, 403, error.message);
      const status = error.kind === 'timeout' ? 504 : 502;
      log.warn({ component: 'dataproxy', dsId: target.id, code: (error as UpstreamError & { code?: string }).code ?? error.kind, status, error: error.message }, 'Proxy request failed');
      if (error.kind === 'tls-config') return json(res, status, error.message);
      res.writeHead(status, { 'content-length': '0' });
      res.end();
    },
  };
}

function json(res: ServerResponse, status: number, message: string): void {
  const body = JSON.stringify({ message });
  res.writeHead(status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) });
  res.end(body);
}

/** The upstream's answer to the client: status and cleaned headers, then the body under the cap. */
function relay(proxyRes: IncomingMessage, res: ServerResponse, limit: number): void {
  proxyRes.on('error', () => res.destroy());
  if (proxyRes.statusCode === 401) {
    proxyRes.resume();
    res.writeHead(400, { 'content-security-policy': 'sandbox' });
    res.end(MESSAGES.proxy.upstreamUnauthorized);
    return;
  }
  res.writeHead(proxyRes.statusCode ?? 502, responseHeaders(proxyRes.headers));
  if (limit > 0) {
    // `[dataproxy] response_limit`: the original reads at most that many bytes, then fails the
    // body; registered before the pipe, so the chunk over the limit is never written.
    let bytes = 0;
    proxyRes.on('data', (chunk: Buffer) => {
      bytes += chunk.length;
      if (bytes > limit) {
        proxyRes.destroy();
        res.destroy();
      }
    });
  }
  proxyRes.pipe(res);
}
