import { createServer, request, type Server } from 'node:http';
import { readFile } from 'node:fs/promises';
import type { AddressInfo } from 'node:net';
import { extname, join, normalize } from 'node:path';
import { fileURLToPath } from 'node:url';

const TYPES: Record<string, string> = { '.html': 'text/html; charset=utf-8', '.js': 'text/javascript; charset=utf-8', '.css': 'text/css; charset=utf-8', '.map': 'application/json' };

export interface PageServer {
  url: string;
  server: Server;
  close(): Promise<void>;
}

/**
 * The page's files on one origin with the API behind it, as a reverse proxy in front of both
 * would serve them in production: `/graphql` and `/api/` go to dashgate (streamed both ways, so
 * subscriptions flow), everything else comes from `root`. The server's CORS stays same-origin only.
 */
export async function servePage(root: string, api: string, port = 0): Promise<PageServer> {
  const upstream = new URL(api);
  const server = createServer((req, res) => {
    const path = (req.url ?? '/').split('?')[0]!;
    if (path === '/graphql' || path.startsWith('/api/')) {
      const forwarded = request({ host: upstream.hostname, port: upstream.port, method: req.method, path: req.url, headers: { ...req.headers, host: upstream.host } }, (answer) => {
        res.writeHead(answer.statusCode ?? 502, answer.headers);
        answer.pipe(res);
      });
      forwarded.on('error', () => {
        if (!res.headersSent) res.writeHead(502).end();
        else res.destroy();
      });
      res.on('close', () => forwarded.destroy());
      req.pipe(forwarded);
      return;
    }
    const file = normalize(join(root, path === '/' ? 'index.html' : path));
    if (!file.startsWith(root)) return void res.writeHead(404).end();
    readFile(file).then(
      (content) => res.writeHead(200, { 'content-type': TYPES[extname(file)] ?? 'application/octet-stream' }).end(content),
      () => res.writeHead(404).end(),
    );
  });
  await new Promise<void>((resolve) => server.listen(port, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    server,
    close: () => new Promise((resolve) => {
      server.close(() => resolve());
      server.closeAllConnections();
    }),
  };
}

// node examples/typed-client/page/serve.ts [dashgate url] [port]: builds the page, then serves it.
if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const { buildPage } = await import('./build.ts');
  const [api = 'http://localhost:3000', port = '5173', flag] = process.argv.slice(2);
  const outdir = fileURLToPath(new URL('dist', import.meta.url));
  await buildPage({ outdir, persisted: flag === '--persisted' });
  const page = await servePage(outdir, api, Number(port));
  console.log(`live page on ${page.url} (API: ${api})`);
}
