import { createServer, request, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from '@jest/globals';
import { EncodedAnswer } from '../../src/query/encoded-answer.ts';
import { takeColumnBuffer } from '../../src/query/frames/column-buffers.ts';
import { encodeResultsSliced } from '../../src/query/frames/encode.ts';
import { writtenField, type DataResponse, type WrittenColumn } from '../../src/query/frames/frame.ts';

// The encoded answer of /api/ds/query owns what building it took: written to a real HTTP
// response, it gives back its budget and its column buffers itself, each once.

let server: Server | undefined;
afterEach(async () => {
  await new Promise<void>((resolve) => (server ? server.close(() => resolve()) : resolve()));
  server = undefined;
});

/** An answer of one refId whose one column lies in a pooled buffer, and a count of budget releases. */
async function answerOfOneColumn(status = 200) {
  const json = Buffer.from('[1,2,3]');
  const buffer = takeColumnBuffer(json.length);
  json.copy(buffer);
  const column: WrittenColumn = { json: buffer.subarray(0, json.length), rows: 3, buffer };
  const responses = new Map<string, DataResponse>([['A', { frames: [{ refId: 'A', fields: [writtenField('Value', 'float64', column)] }] }]]);
  const releases = { budget: 0 };
  const encoded = await encodeResultsSliced(responses);
  const answer = new EncodedAnswer(status, encoded, responses, () => releases.budget++);
  return { answer, column, releases, expected: Buffer.concat(encoded.chunks.map((c) => Buffer.from(c))).toString('utf8') };
}

/** A server answering every request with `handler`, and its port. */
async function serve(handler: (req: IncomingMessage, res: ServerResponse) => void): Promise<number> {
  server = createServer(handler);
  await new Promise<void>((resolve) => server!.listen(0, '127.0.0.1', resolve));
  return (server.address() as AddressInfo).port;
}

function get(port: number): Promise<{ status: number; headers: IncomingMessage['headers']; body: string }> {
  return new Promise((resolve, reject) => {
    request({ port, host: '127.0.0.1', path: '/' }, (res) => {
      const parts: Buffer[] = [];
      res.on('data', (chunk: Buffer) => parts.push(chunk));
      res.on('end', () => resolve({ status: res.statusCode!, headers: res.headers, body: Buffer.concat(parts).toString('utf8') }));
    }).on('error', reject).end();
  });
}

const until = async (done: () => boolean) => {
  for (let i = 0; i < 200 && !done(); i++) await new Promise((resolve) => setTimeout(resolve, 10));
};

describe('EncodedAnswer', () => {
  it('writes its status, JSON headers and bytes, then gives back its budget and its column buffers once', async () => {
    const { answer, column, releases, expected } = await answerOfOneColumn(400);
    expect(JSON.parse(expected).results.A.frames[0].data.values).toEqual([[1, 2, 3]]);
    const port = await serve((_req, res) => answer.writeTo(res));
    const res = await get(port);
    expect([res.status, res.headers['content-type'], res.headers['content-length'], res.body]).toEqual([400, 'application/json', String(answer.byteLength), expected]);
    await until(() => column.buffer === undefined);
    expect(column.buffer).toBeUndefined();
    // Written and closed: one release, though both the end and the close report it.
    await until(() => releases.budget > 0);
    await new Promise((resolve) => setTimeout(resolve, 50));
    answer.discard();
    expect([releases.budget, column.buffer]).toEqual([1, undefined]);
  });

  it('dropped unwritten, gives everything back once', async () => {
    const { answer, column, releases } = await answerOfOneColumn();
    answer.discard();
    answer.discard();
    expect([releases.budget, column.buffer]).toEqual([1, undefined]);
  });

  it('for a client already gone, writes nothing and gives everything back', async () => {
    const { answer, column, releases } = await answerOfOneColumn();
    let wrote: boolean | undefined;
    const port = await serve((req, res) => {
      // Written only once the client has left.
      res.once('close', () => {
        answer.writeTo(res);
        wrote = res.headersSent;
      });
    });
    await new Promise<void>((resolve) => {
      const req = request({ port, host: '127.0.0.1', path: '/' });
      req.on('error', () => resolve());
      req.on('socket', (socket) => socket.on('connect', () => setTimeout(() => req.destroy(), 50)));
      req.on('close', () => resolve());
      req.end();
    });
    await until(() => wrote !== undefined);
    expect([wrote, releases.budget, column.buffer]).toEqual([false, 1, undefined]);
  });
});
