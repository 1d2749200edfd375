import { createSocket } from 'node:dgram';
import type { AddressInfo } from 'node:net';

/**
 * A DNS server on loopback UDP that answers A queries for the names it is given, as Docker's
 * embedded DNS answers a compose service's name with every replica's address: the balancer tests
 * point HAProxy's `resolvers` at it. Other types get an empty answer, other names NXDOMAIN.
 */
export interface NameServer {
  /** `127.0.0.1:<port>`, for a `nameserver` line. */
  address: string;
  /** Replaces the addresses a name resolves to. */
  set(name: string, addresses: string[]): void;
  /** Queries answered so far. */
  readonly queries: number;
  close(): Promise<void>;
}

const TYPE_A = 1;

export async function startNameServer(records: Record<string, string[]> = {}): Promise<NameServer> {
  const names = new Map(Object.entries(records).map(([name, addresses]) => [name.toLowerCase(), addresses]));
  let queries = 0;
  const socket = createSocket('udp4');
  socket.on('message', (message, peer) => {
    const answer = respond(message, names);
    if (!answer) return;
    queries++;
    socket.send(answer, peer.port, peer.address);
  });
  await new Promise<void>((resolve) => socket.bind(0, '127.0.0.1', resolve));
  return {
    address: `127.0.0.1:${(socket.address() as AddressInfo).port}`,
    set: (name, addresses) => void names.set(name.toLowerCase(), addresses),
    get queries() {
      return queries;
    },
    close: () => new Promise<void>((resolve) => socket.close(() => resolve())),
  };
}

/** The answer to one query, or null for something that is not a query this server reads. */
function respond(query: Buffer, names: Map<string, string[]>): Buffer | null {
  if (query.length < 12 || (query[2]! & 0x80) !== 0 || query.readUInt16BE(4) !== 1) return null;
  const labels: string[] = [];
  let at = 12;
  while (at < query.length && query[at] !== 0) {
    const length = query[at]!;
    if (length > 63 || at + 1 + length > query.length) return null;
    labels.push(query.subarray(at + 1, at + 1 + length).toString('latin1'));
    at += 1 + length;
  }
  if (at + 5 > query.length) return null;
  const questionEnd = at + 5;
  const type = query.readUInt16BE(at + 1);
  const addresses = names.get(labels.join('.').toLowerCase());
  const answers = addresses && type === TYPE_A ? addresses : [];
  const header = Buffer.alloc(12);
  query.copy(header, 0, 0, 2); // id
  // QR, the query's opcode and RD, AA, RA; NXDOMAIN for a name not known at all.
  header[2] = 0x80 | (query[2]! & 0x79) | 0x04;
  header[3] = 0x80 | (addresses ? 0 : 3);
  header.writeUInt16BE(1, 4);
  header.writeUInt16BE(answers.length, 6);
  const records = answers.map((address) => {
    const record = Buffer.alloc(16);
    record.writeUInt16BE(0xc00c, 0); // the name: a pointer to the question's
    record.writeUInt16BE(TYPE_A, 2);
    record.writeUInt16BE(1, 4); // IN
    record.writeUInt32BE(1, 6); // TTL: 1 s
    record.writeUInt16BE(4, 10);
    address.split('.').forEach((octet, i) => (record[12 + i] = Number(octet)));
    return record;
  });
  return Buffer.concat([header, query.subarray(12, questionEnd), ...records]);
}
