import { execFileSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer as createHttpsServer, type Server } from 'node:https';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { TLSSocket } from 'node:tls';

export interface KeyPair {
  cert: string;
  key: string;
}

/** Whether the `openssl` command is there to make certificates with. */
export function opensslAvailable(): boolean {
  try {
    execFileSync('openssl', ['version'], { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
}

/**
 * A throw-away PKI made with the `openssl` command in a temporary folder: CAs, and leaf
 * certificates they sign, with the subject alternative names and validity asked for.
 */
export class TestPki {
  readonly #dir = mkdtempSync(join(tmpdir(), 'dashgate-pki-'));
  #serial = 1;

  #openssl(args: string[]): void {
    execFileSync('openssl', args, { cwd: this.#dir, stdio: ['ignore', 'ignore', 'pipe'] });
  }

  #read(name: string): string {
    return readFileSync(join(this.#dir, name), 'utf8');
  }

  ca(name: string): KeyPair {
    this.#openssl(['req', '-x509', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:P-256', '-nodes', '-keyout', `${name}.key`, '-out', `${name}.crt`,
      '-days', '2', '-subj', `/CN=${name}`, '-addext', 'basicConstraints=critical,CA:TRUE', '-addext', 'keyUsage=critical,keyCertSign,cRLSign']);
    return { cert: this.#read(`${name}.crt`), key: this.#read(`${name}.key`) };
  }

  /** A leaf signed by `ca`: `san` like `DNS:localhost,IP:127.0.0.1`; `days` -1 makes it already expired. */
  leaf(ca: KeyPair, name: string, options: { san?: string; usage: 'serverAuth' | 'clientAuth'; days?: number }): KeyPair {
    const caName = `${name}-issuer`;
    writeFileSync(join(this.#dir, `${caName}.crt`), ca.cert);
    writeFileSync(join(this.#dir, `${caName}.key`), ca.key);
    writeFileSync(join(this.#dir, `${name}.ext`), `${options.san ? `subjectAltName=${options.san}\n` : ''}extendedKeyUsage=${options.usage}\n`);
    this.#openssl(['req', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:P-256', '-nodes', '-keyout', `${name}.key`, '-out', `${name}.csr`, '-subj', `/CN=${name}`]);
    this.#openssl(['x509', '-req', '-in', `${name}.csr`, '-CA', `${caName}.crt`, '-CAkey', `${caName}.key`, '-set_serial', String(this.#serial++),
      '-out', `${name}.crt`, '-days', String(options.days ?? 1), '-extfile', `${name}.ext`]);
    return { cert: this.#read(`${name}.crt`), key: this.#read(`${name}.key`) };
  }

  remove(): void {
    if (existsSync(this.#dir)) rmSync(this.#dir, { recursive: true, force: true });
  }
}

export interface TlsUpstream {
  url: string;
  port: number;
  server: Server;
  /** TLS connections completed, and those still open. */
  connections: { total: number; open: number };
  close(): Promise<void>;
}

/**
 * A real HTTPS server on loopback. By default it answers what it saw of the connection as JSON:
 * the SNI name and the client certificate's common name (empty when none), and answers a
 * Prometheus instant query of 1+1 as Prometheus does, so health checks pass.
 */
export async function startTlsUpstream(
  options: { cert: KeyPair; clientCa?: string; requireClientCert?: boolean },
  respond?: (req: IncomingMessage, res: ServerResponse) => void,
): Promise<TlsUpstream> {
  const connections = { total: 0, open: 0 };
  const sockets = new Set<Socket>();
  const server = createHttpsServer({
    cert: options.cert.cert,
    key: options.cert.key,
    ...(options.clientCa ? { ca: options.clientCa, requestCert: true, rejectUnauthorized: options.requireClientCert ?? true } : {}),
  }, (req, res) => {
    if (respond) return respond(req, res);
    const socket = req.socket as TLSSocket;
    const peer = socket.getPeerCertificate();
    req.resume();
    req.on('end', () => {
      res.writeHead(200, { 'content-type': 'application/json' });
      if (req.url?.includes('/api/v1/query')) res.end(JSON.stringify({ status: 'success', data: { resultType: 'scalar', result: [4, '2'] } }));
      else res.end(JSON.stringify({ servername: (socket as TLSSocket & { servername?: string | false }).servername || '', client: peer?.subject?.CN ?? '', url: req.url, headers: req.headers }));
    });
  });
  server.on('secureConnection', (socket) => {
    connections.total++;
    connections.open++;
    socket.on('close', () => connections.open--);
  });
  server.on('connection', (socket: Socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
  });
  // Handshake failures (refused client certificates) are expected here.
  server.on('tlsClientError', () => {});
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `https://127.0.0.1:${port}`,
    port,
    server,
    connections,
    close: () =>
      new Promise((resolve) => {
        for (const socket of sockets) socket.destroy();
        server.close(() => resolve());
      }),
  };
}
