import { execFileSync, spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { chmod, chown, cp, mkdir, mkdtemp, readdir, readFile, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { afterAll, describe, expect, it } from '@jest/globals';
import pg from 'pg';
import type { PgConnection } from '../../src/db/embedded.ts';
import { dropTestDatabase, testCluster } from '../support/database.ts';
import { dockerIgnores, readDockerfile, type Instruction, type Stage } from '../support/dockerfile.ts';
import { freePort } from '../support/main-process.ts';
import { basic, call, gql } from '../support/server.ts';

/**
 * The image, built without Docker: no engine runs where the tests do, and base images cannot be
 * pulled, so this test carries out the Dockerfile itself. The build context is the tracked files
 * that .dockerignore lets through; the build stage's COPY and RUN run in a folder standing for its
 * WORKDIR with the pinned Node first on the PATH (the base image's Node); the runtime stage is put
 * together from its COPY lines alone; its CMD then runs with its ENV as an unprivileged user
 * (`nobody` for the image's `node`) against an empty database of the test PostgreSQL, configured
 * through the environment as docker-compose.yml does, and must migrate it, start and answer.
 */

const root = new URL('../..', import.meta.url).pathname;
const pkg = JSON.parse(await readFile(join(root, 'package.json'), 'utf8')) as {
  scripts: Record<string, string>;
  dependencies: Record<string, string>;
  devDependencies: Record<string, string>;
};
const UNPRIVILEGED = { uid: 65534, gid: 65534 };
const asRoot = process.getuid?.() === 0;

let dir = '';
let db: PgConnection | null = null;
let server: ChildProcess | null = null;

afterAll(async () => {
  if (server && server.exitCode === null && server.signalCode === null) server.kill('SIGKILL');
  if (db) await dropTestDatabase(db);
  if (dir) await rm(dir, { recursive: true, force: true });
});

function run(command: string, args: string[], options: { cwd: string; env: NodeJS.ProcessEnv }): void {
  const result = spawnSync(command, args, { ...options, encoding: 'utf8', maxBuffer: 64 * 1024 * 1024 });
  if (result.status !== 0) throw new Error(`${command} ${args.join(' ')} failed (${result.status}):\n${result.stdout}\n${result.stderr}`);
}

/** `--chown`/USER as this test performs them: the image's `node` user is `nobody` here. */
async function chownTree(path: string): Promise<void> {
  if (!asRoot) return;
  await chown(path, UNPRIVILEGED.uid, UNPRIVILEGED.gid);
  if ((await stat(path)).isDirectory()) for (const entry of await readdir(path)) await chownTree(join(path, entry));
}

/** A COPY: each source into the destination (a folder's contents, as Docker copies a folder). */
async function copy(step: Instruction, from: (path: string) => string, to: (path: string) => string): Promise<void> {
  const args = step.text.split(/\s+/);
  const destination = args.pop()!;
  for (const source of args) {
    const origin = from(source);
    const isFolder = (await stat(origin)).isDirectory();
    const target = destination.endsWith('/') && !isFolder ? join(to(destination), source.split('/').at(-1)!) : to(destination);
    await mkdir(isFolder ? target : dirname(target), { recursive: true });
    // cp(1): node_modules is thousands of files, which fs.cp copies several times slower. From the
    // build stage, hard links: its folder is thrown away, so a link is as good as a copy.
    run('cp', [step.flags.from ? '-al' : '-a', isFolder ? `${origin}/.` : origin, target], { cwd: '/', env: process.env });
    if (step.flags.chown) await chownTree(target);
  }
}

describe('the image (Dockerfile), built and run without Docker', () => {
  it('builds with production dependencies only and runs dist/ as an unprivileged user: it migrates an empty database, starts and answers; so do the CLI and the embedded database', async () => {
    const stages = readDockerfile(join(root, 'Dockerfile'));
    expect(stages.map((s) => s.name)).toEqual(['build', null]);
    const [build, runtime] = stages as [Stage, Stage];
    // The base image is the Node that package.json pins.
    for (const stage of stages) expect(stage.image).toBe(`node:${pkg.devDependencies.node}-bookworm-slim`);
    // The runtime stage only copies (this test cannot run commands as the image would).
    expect(runtime.instructions.filter((step) => step.keyword === 'RUN')).toEqual([]);

    dir = await mkdtemp(join(tmpdir(), 'dashgate-image-'));
    await chmod(dir, 0o755);
    const context = join(dir, 'context');
    const ignore = await readFile(join(root, '.dockerignore'), 'utf8');
    const tracked = execFileSync('git', ['ls-files', '-z'], { cwd: root, encoding: 'utf8' }).split('\0').filter(Boolean);
    const sent = tracked.filter((file) => !dockerIgnores(ignore, file));
    expect(sent).toContain('src/main.ts');
    expect(sent.some((file) => file.startsWith('test/') || file.startsWith('node_modules/'))).toBe(false);
    for (const file of sent) {
      await mkdir(dirname(join(context, file)), { recursive: true });
      await cp(join(root, file), join(context, file));
    }

    // The base image's Node: the pinned one (the `node` package's binary), where the image has it.
    const binDir = join(dir, 'usr-local-bin');
    await mkdir(binDir);
    await cp(join(root, 'node_modules', 'node', 'bin', 'node'), join(binDir, 'node'));
    await chmod(dir, 0o755);
    const path = `${binDir}:${process.env.PATH}`;
    expect(execFileSync(join(binDir, 'node'), ['--version'], { encoding: 'utf8' }).trim()).toBe(`v${pkg.devDependencies.node}`);

    // The build stage: its WORKDIR is a folder of its own; COPY from the context, RUN in a shell.
    const stageDir = (name: string) => join(dir, name);
    const workdirOf = (stage: Stage) => stage.instructions.find((step) => step.keyword === 'WORKDIR')!.text;
    const inStage = (stage: Stage, name: string) => (p: string) => join(stageDir(name), p.startsWith('/') ? p : join(workdirOf(stage), p));
    const env: NodeJS.ProcessEnv = { PATH: path, HOME: join(dir, 'home'), npm_config_cache: join(process.env.HOME ?? '/root', '.npm'), npm_config_prefer_offline: 'true' };
    const buildDir = inStage(build, 'build')('.');
    await mkdir(buildDir, { recursive: true });
    for (const step of build.instructions) {
      if (step.keyword === 'WORKDIR') continue;
      else if (step.keyword === 'COPY') await copy(step, (p) => join(context, p), inStage(build, 'build'));
      else if (step.keyword === 'RUN') run('sh', ['-c', step.text], { cwd: buildDir, env });
      else throw new Error(`the build stage has ${step.keyword}, which this test does not perform`);
    }

    // The runtime stage, from its COPY lines; ENV, USER and CMD are used below.
    const appDir = inStage(runtime, 'runtime')('.');
    await mkdir(appDir, { recursive: true });
    const runtimeEnv: Record<string, string> = {};
    let user = 'root';
    for (const step of runtime.instructions) {
      if (step.keyword === 'COPY') await copy(step, step.flags.from === 'build' ? inStage(build, 'build') : (p) => join(context, p), inStage(runtime, 'runtime'));
      else if (step.keyword === 'ENV') {
        const [, name, value] = /^(\S+?)[= ](.*)$/.exec(step.text)!;
        runtimeEnv[name!] = value!;
      } else if (step.keyword === 'USER') user = step.text;
      else if (!['WORKDIR', 'VOLUME', 'EXPOSE', 'CMD', 'HEALTHCHECK'].includes(step.keyword)) throw new Error(`the runtime stage has ${step.keyword}, which this test does not perform`);
    }
    expect(user).toBe('node');
    await chmod(join(dir, 'runtime'), 0o755);

    // What runs is dist/ over production dependencies: no sources, no build, no dev dependency.
    const shipped = (await readdir(appDir)).sort();
    expect(shipped).toEqual(['conf', 'data', 'dist', 'node_modules', 'package.json']);
    for (const name of Object.keys(pkg.dependencies)) expect({ name, present: await stat(join(appDir, 'node_modules', name)).then(() => true, () => false) }).toEqual({ name, present: true });
    for (const name of Object.keys(pkg.devDependencies)) expect({ name, present: await stat(join(appDir, 'node_modules', name)).then(() => true, () => false) }).toEqual({ name, present: false });

    // An empty database on the test PostgreSQL, as an external one in production.
    const cluster = testCluster();
    db = { ...cluster, database: `image_${process.pid}_${Date.now()}` };
    const admin = new pg.Client({ ...cluster, database: 'postgres' });
    await admin.connect();
    await admin.query(`create database ${db.database}`);
    await admin.end();
    const port = await freePort();
    const password = 'image-admin-password';
    const serverEnv: Record<string, string> = {
      PATH: path,
      HOME: '/nonexistent',
      ...runtimeEnv,
      GF_SERVER_HTTP_ADDR: '127.0.0.1',
      GF_SERVER_HTTP_PORT: String(port),
      GF_DATABASE_TYPE: 'postgres',
      GF_DATABASE_HOST: `${db.host}:${db.port}`,
      GF_DATABASE_NAME: db.database,
      GF_DATABASE_USER: db.user,
      GF_DATABASE_PASSWORD: db.password,
      GF_SECURITY_ADMIN_PASSWORD: password,
      GF_SECURITY_SECRET_KEY: 'image-test-key-0123456789abcdef0123456789',
    };
    // The image's `node` user: an unprivileged one here (root runs the tests).
    const asUser = (argv: string[]) => (asRoot ? ['setpriv', [`--reuid=${UNPRIVILEGED.uid}`, `--regid=${UNPRIVILEGED.gid}`, '--clear-groups', '--', ...argv]] as const : [argv[0]!, argv.slice(1)] as const);
    const cmd = runtime.instructions.find((step) => step.keyword === 'CMD')!.exec!;
    // `npm start`'s Node flags, on dist/ directly (bin/start.js would build it first when stale).
    const startFlags = pkg.scripts.start!.split(/\s+/).filter((word) => word.startsWith('--'));
    expect(cmd).toEqual(['node', ...startFlags, 'dist/main.js']);
    const [command, args] = asUser(cmd);
    let output = '';
    server = spawn(command, args, { cwd: appDir, env: serverEnv, stdio: ['ignore', 'pipe', 'pipe'] });
    server.stdout!.on('data', (chunk: Buffer) => (output += chunk.toString()));
    server.stderr!.on('data', (chunk: Buffer) => (output += chunk.toString()));
    const exited = new Promise<number | null>((resolve) => server!.once('exit', (code) => resolve(code)));
    const deadline = Date.now() + 90_000;
    while (!output.includes('dashgate listening')) {
      if (server.exitCode !== null || Date.now() > deadline) throw new Error(`the image's command did not start:\n${output}`);
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    if (asRoot) expect((await readFile(`/proc/${server.pid}/status`, 'utf8')).match(/^Uid:\s+(\d+)/m)?.[1]).toBe(String(UNPRIVILEGED.uid));
    const base = { url: `http://127.0.0.1:${port}` };
    const health = await call(base, 'GET', '/api/health', { auth: null });
    expect(health.status).toBe(200);
    // No checkout in the image, so no commit to name.
    expect(health.body).toMatchObject({ database: 'ok', commit: 'unknown' });
    const auth = basic('admin', password);
    const created = await call(base, 'POST', '/api/datasources', { auth, body: { name: 'from-the-image', type: 'prometheus', access: 'proxy', url: 'http://127.0.0.1:9' } });
    expect(created.status).toBe(200);
    const listed = await call(base, 'GET', '/api/datasources', { auth });
    expect(listed.status).toBe(200);
    expect(listed.body.map((ds: { name: string }) => ds.name)).toEqual(['from-the-image']);
    expect((await gql(base, '{ currentOrganization { dataSource(name: "from-the-image") { name type } } }', {}, auth)).body).toEqual({ data: { currentOrganization: { dataSource: { name: 'from-the-image', type: 'prometheus' } } } });
    expect((await call(base, 'GET', '/api/datasources', { auth: basic('admin', 'admin') })).status).toBe(401);

    // The image's HEALTHCHECK command, as the same user: healthy now, unhealthy once stopped.
    const healthcheck = runtime.instructions.find((step) => step.keyword === 'HEALTHCHECK')!.exec!;
    const probe = () => {
      const [c, a] = asUser(healthcheck);
      return spawnSync(c, a, { cwd: appDir, env: serverEnv, timeout: 10_000 }).status;
    };
    expect(probe()).toBe(0);

    server.kill('SIGTERM');
    expect(await exited).toBe(0);
    expect(output).toContain('"msg":"stopped"');
    expect(probe()).toBe(1);

    // The CLI runs from dist/ too (`docker exec <container> node dist/cli.js ...`).
    const [cliCommand, cliArgs] = asUser(['node', '--experimental-async-context-frame', 'dist/cli.js', 'migrate']);
    const migrated = spawnSync(cliCommand, cliArgs, { cwd: appDir, env: serverEnv, encoding: 'utf8', timeout: 60_000 });
    expect({ status: migrated.status, stderr: migrated.stderr }).toEqual({ status: 0, stderr: '' });

    // With no [database], the embedded PostgreSQL in the data folder, run by the same user, with a
    // key the instance generates for itself there.
    const embeddedEnv = Object.fromEntries(Object.entries(serverEnv).filter(([name]) => !name.startsWith('GF_DATABASE_') && name !== 'GF_SECURITY_SECRET_KEY'));
    let embeddedOutput = '';
    server = spawn(command, args, { cwd: appDir, env: embeddedEnv, stdio: ['ignore', 'pipe', 'pipe'] });
    server.stdout!.on('data', (chunk: Buffer) => (embeddedOutput += chunk.toString()));
    server.stderr!.on('data', (chunk: Buffer) => (embeddedOutput += chunk.toString()));
    const embeddedExited = new Promise<number | null>((resolve) => server!.once('exit', (code) => resolve(code)));
    const embeddedDeadline = Date.now() + 120_000;
    while (!embeddedOutput.includes('dashgate listening')) {
      if (server.exitCode !== null || Date.now() > embeddedDeadline) throw new Error(`the image's command did not start on the embedded database:\n${embeddedOutput}`);
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    expect((await call(base, 'GET', '/api/health', { auth: null })).body).toMatchObject({ database: 'ok' });
    expect((await call(base, 'GET', '/api/datasources', { auth })).status).toBe(200);
    expect(await readdir(join(appDir, 'data'))).toEqual(expect.arrayContaining(['postgres', 'secret_key']));
    server.kill('SIGTERM');
    expect(await embeddedExited).toBe(0);
  }, 300_000);
});

