import { execFile } from 'node:child_process';
import { mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { NoDeprecatedCustomRule, parse, validate } from 'graphql';
import { getPublicSchema } from '../../../src/graphql/schema/index.ts';
import { createClient, CreateDataSourceMutation, GraphQLRequestError, listDataSources, OrganizationMembersQuery, whoAmI } from '../../../examples/typed-client/src/client.ts';
import { ADMIN, basic, call, startTestServer, type TestServer } from '../../support/server.ts';

const run = promisify(execFile);
const root = fileURLToPath(new URL('../../..', import.meta.url));
const example = join(root, 'examples/typed-client');
const generatedDir = join(example, 'src/gql');
// The Node that runs this suite also runs the example and the tools, as `npm run` would.
const node = process.execPath;

/** Runs the example's own codegen config without writing, returning what it would generate. */
async function generateInMemory(): Promise<Array<{ filename: string; content: string }>> {
  const scratch = await mkdtemp(join(tmpdir(), 'dashgate-codegen-'));
  try {
    const out = join(scratch, 'files.json');
    const script = `
      import { writeFileSync } from 'node:fs';
      import { generate } from '@graphql-codegen/cli';
      import config from './examples/typed-client/codegen.ts';
      const files = await generate({ ...config, silent: true }, false);
      writeFileSync(${JSON.stringify(out)}, JSON.stringify(files.map(({ filename, content }) => ({ filename, content }))));
    `;
    await run(node, ['--input-type=module', '-e', script], { cwd: root, timeout: 120_000 });
    return JSON.parse(await readFile(out, 'utf8')) as Array<{ filename: string; content: string }>;
  } finally {
    await rm(scratch, { recursive: true, force: true });
  }
}

/**
 * The example's type checks with their `@ts-expect-error` lines blanked, compiled on their own:
 * the lines each directive stood over, and the lines tsc then rejects.
 */
async function misusesRejected(): Promise<{ expected: number[]; rejected: number[] }> {
  const source = await readFile(join(example, 'src/type-checks.ts'), 'utf8');
  const expected: number[] = [];
  const lines = source.split('\n').map((line, i) => {
    if (!line.trim().startsWith('// @ts-expect-error')) return line.replace("from './client.ts'", `from ${JSON.stringify(join(example, 'src/client.ts'))}`);
    expected.push(i + 2);
    return '';
  });
  const scratch = await mkdtemp(join(tmpdir(), 'dashgate-misuses-'));
  try {
    await writeFile(join(scratch, 'type-checks.mts'), lines.join('\n'));
    await writeFile(join(scratch, 'tsconfig.json'), JSON.stringify({
      extends: join(root, 'tsconfig.json'),
      compilerOptions: { lib: ['ES2023', 'DOM'], types: ['node'], typeRoots: [join(root, 'node_modules/@types')] },
      files: ['type-checks.mts'],
    }));
    const failed = await run(node, [join(root, 'node_modules/typescript/bin/tsc'), '-p', join(scratch, 'tsconfig.json')], { cwd: root, timeout: 120_000 })
      .then(() => ({ stdout: '' }), (error: { stdout: string }) => error);
    const rejected = [...failed.stdout.matchAll(/type-checks\.mts\((\d+),\d+\): error/g)].map((m) => Number(m[1]));
    return { expected, rejected: [...new Set(rejected)].sort((a, b) => a - b) };
  } finally {
    await rm(scratch, { recursive: true, force: true });
  }
}

let server: TestServer;
let generation: ReturnType<typeof generateInMemory>;
let typecheck: Promise<{ stdout: string; stderr: string }>;
let misuses: ReturnType<typeof misusesRejected>;

beforeAll(async () => {
  // The two slow child processes run while the server starts.
  generation = generateInMemory();
  typecheck = run(node, [join(root, 'node_modules/typescript/bin/tsc'), '-p', join(example, 'tsconfig.json')], { cwd: root, timeout: 120_000 });
  generation.catch(() => undefined);
  typecheck.catch(() => undefined);
  misuses = misusesRejected();
  misuses.catch(() => undefined);
  server = await startTestServer();
});
afterAll(() => server?.close());

describe('examples/typed-client', () => {
  it('generates types from schema/schema.graphql, and the committed output is up to date (run `npm run codegen`)', async () => {
    const files = await generation;
    const committed = (await readdir(generatedDir)).sort();
    expect(files.map((f) => f.filename.replace(/^.*\/src\/gql\//, '')).sort()).toEqual(committed);
    for (const file of files) {
      expect({ file: file.filename, content: await readFile(file.filename, 'utf8') }).toEqual({ file: file.filename, content: file.content });
    }
    const types = files.find((f) => f.filename.endsWith('/graphql.ts'))!.content;
    expect(types).toContain('nodes: Array<{ id: string, databaseId: number, uid: string, name: string');
  });

  it('uses the graph only: no document of the example asks for a deprecated field or argument', async () => {
    const manifest = JSON.parse(await readFile(join(generatedDir, 'persisted-documents.json'), 'utf8')) as Record<string, string>;
    expect(Object.keys(manifest).length).toBeGreaterThan(5);
    for (const [hash, text] of Object.entries(manifest)) {
      expect({ hash, errors: validate(getPublicSchema(), parse(text), [NoDeprecatedCustomRule]).map((e) => e.message) }).toEqual({ hash, errors: [] });
    }
  });

  it('type-checks, with misuses of the generated types still rejected', async () => {
    // Clean: every directive still stands over an error (an unused one fails the check).
    await expect(typecheck).resolves.toEqual({ stdout: '', stderr: '' });
    // And each misuse, its directive taken away, is what tsc rejects: nothing more, nothing less.
    const { expected, rejected } = await misuses;
    expect(expected.length).toBeGreaterThanOrEqual(9);
    expect(rejected).toEqual(expected);
  }, 120_000);

  it('runs its typed operations against a real server', async () => {
    const client = createClient({ url: server.url, authorization: ADMIN });
    const created = await client(CreateDataSourceMutation, {
      input: { name: 'typed-prom', type: 'prometheus', access: 'proxy', url: 'http://127.0.0.1:9090', jsonData: { httpMethod: 'POST' } },
    });
    expect(created.dataSourceCreate).toEqual({
      dataSource: { id: expect.any(String), databaseId: expect.any(Number), uid: expect.any(String), name: 'typed-prom', type: 'prometheus', url: 'http://127.0.0.1:9090' },
      userErrors: [],
    });
    const ds = created.dataSourceCreate.dataSource!;

    const list = await listDataSources(client);
    expect(list).toEqual([{
      id: ds.id, databaseId: ds.databaseId, uid: ds.uid, name: 'typed-prom', type: 'prometheus',
      url: 'http://127.0.0.1:9090', isDefault: true, jsonData: { httpMethod: 'POST' },
    }]);
  });

  it('reads the signed-in user and an org\'s members', async () => {
    const client = createClient({ url: server.url, authorization: ADMIN });
    const me = await whoAmI(client);
    expect(me).toMatchObject({ login: 'admin', orgId: 1, isServiceAdmin: true, organizations: [{ orgId: 1, name: 'Main Org.', role: 'Admin' }] });
    const org = (await call(server, 'POST', '/graphql', { body: { query: '{ viewer { currentOrganization { id } } }' } })).body.data.viewer.currentOrganization.id;
    const { node } = await client(OrganizationMembersQuery, { orgId: org });
    expect(node && 'members' in node ? node.members?.nodes.map((m) => [m.login, m.role]) : null).toEqual([['admin', 'Admin']]);
  });

  it('reports the server\'s errors with their status, and a mutation\'s user errors in its answer', async () => {
    const stranger = createClient({ url: server.url, authorization: basic('admin', 'wrong-password') });
    const error = await listDataSources(stranger).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(GraphQLRequestError);
    expect((error as GraphQLRequestError).status).toBe(401);

    const client = createClient({ url: server.url, authorization: ADMIN });
    const duplicate = await client(CreateDataSourceMutation, { input: { name: 'typed-prom', type: 'prometheus', access: 'proxy' } });
    expect(duplicate.dataSourceCreate).toEqual({ dataSource: null, userErrors: [{ code: 'CONFLICT', message: 'data source with the same name already exists' }] });
  });

  it('runs under plain Node as its README shows', async () => {
    const { stdout } = await run(node, [join(example, 'src/main.ts'), server.url, 'admin:admin'], { cwd: root, timeout: 30_000 });
    expect(stdout).toMatch(/^\d+\ttyped-prom\tprometheus\thttp:\/\/127\.0\.0\.1:9090\t\(default\)\n$/);
  });
});
