import { mkdirSync, mkdtempSync, rmSync, writeFileSync, existsSync } from 'node:fs';
import { connect } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { freePort } from './main-process.ts';
import { missing, run, stop, until } from './real-upstreams.ts';

export const CARBON_CACHE = '/usr/bin/carbon-cache';
export const GRAPHITE_WSGI = '/usr/share/graphite-web/graphite.wsgi';
const PYTHON = '/usr/bin/python3';

export interface Graphite {
  /** graphite-web. */
  url: string;
  /** Sends `path value unixSeconds` lines over carbon's plaintext protocol and waits until each metric's whisper file exists. */
  send(points: [path: string, value: number, seconds: number][]): Promise<void>;
  close(): Promise<void>;
}

/**
 * Debian's carbon-cache and graphite-web (Django, served by Python's wsgiref) on free loopback
 * ports, whisper files, settings and SQLite in a temp dir; undefined when not installed.
 */
export async function startGraphite(): Promise<Graphite | undefined> {
  if (missing([CARBON_CACHE, GRAPHITE_WSGI, PYTHON], 'Graphite')) return undefined;
  const dir = mkdtempSync(join(tmpdir(), 'dashgate-graphite-'));
  for (const sub of ['whisper', 'log', 'pid']) mkdirSync(join(dir, sub));
  const [line, pickle, cacheQuery, web] = [await freePort(), await freePort(), await freePort(), await freePort()];
  writeFileSync(join(dir, 'carbon.conf'), [
    '[cache]', `STORAGE_DIR = ${dir}/`, `LOCAL_DATA_DIR = ${dir}/whisper/`, `CONF_DIR = ${dir}/`, `LOG_DIR = ${dir}/log/`, `PID_DIR = ${dir}/pid/`,
    'ENABLE_LOGROTATION = False', 'USER =', 'MAX_CACHE_SIZE = inf', 'MAX_UPDATES_PER_SECOND = inf', 'MAX_CREATES_PER_MINUTE = inf',
    'LINE_RECEIVER_INTERFACE = 127.0.0.1', `LINE_RECEIVER_PORT = ${line}`, 'ENABLE_UDP_LISTENER = False',
    'PICKLE_RECEIVER_INTERFACE = 127.0.0.1', `PICKLE_RECEIVER_PORT = ${pickle}`,
    'CACHE_QUERY_INTERFACE = 127.0.0.1', `CACHE_QUERY_PORT = ${cacheQuery}`,
    'WHISPER_AUTOFLUSH = True', 'ENABLE_TAGS = False', '',
  ].join('\n'));
  writeFileSync(join(dir, 'storage-schemas.conf'), '[default]\npattern = .*\nretentions = 10s:7d\n');
  writeFileSync(join(dir, 'dashgate_graphite_settings.py'), [
    "SECRET_KEY = 'test-only'",
    "GRAPHITE_ROOT = '/usr/share/graphite-web'",
    "STATIC_ROOT = '/usr/share/graphite-web/static'",
    `CONF_DIR = '${dir}'`, `STORAGE_DIR = '${dir}'`, `WHISPER_DIR = '${dir}/whisper'`, `LOG_DIR = '${dir}/log'`, `INDEX_FILE = '${dir}/search_index'`,
    `CARBONLINK_HOSTS = ['127.0.0.1:${cacheQuery}']`,
    `DATABASES = {'default': {'NAME': '${dir}/graphite.db', 'ENGINE': 'django.db.backends.sqlite3'}}`,
    "ALLOWED_HOSTS = ['127.0.0.1']", 'FUNCTION_PLUGINS = []', 'DEFAULT_XFILES_FACTOR = 0', '',
  ].join('\n'));
  writeFileSync(join(dir, 'serve.py'), [
    'import runpy, sys',
    'from socketserver import ThreadingMixIn',
    'from wsgiref.simple_server import WSGIRequestHandler, WSGIServer, make_server',
    'class Quiet(WSGIRequestHandler):',
    '    def log_message(self, *args):',
    '        pass',
    'class Threading(ThreadingMixIn, WSGIServer):',
    '    daemon_threads = True',
    `app = runpy.run_path('${GRAPHITE_WSGI}')['application']`,
    "server = make_server('127.0.0.1', int(sys.argv[1]), app, server_class=Threading, handler_class=Quiet)",
    'server.serve_forever()', '',
  ].join('\n'));
  const env = { ...process.env, PYTHONPATH: dir, GRAPHITE_SETTINGS_MODULE: 'dashgate_graphite_settings', DJANGO_SETTINGS_MODULE: 'graphite.settings' };
  const migrate = run(PYTHON, ['/usr/bin/graphite-manage', 'migrate', '--noinput'], env);
  const migrated = await new Promise<number | null>((resolve) => migrate.child.once('exit', resolve));
  if (migrated !== 0) {
    rmSync(dir, { recursive: true, force: true });
    throw new Error(`graphite-manage migrate failed: ${migrate.output()}`);
  }
  const carbon = run(CARBON_CACHE, [`--config=${dir}/carbon.conf`, '--nodaemon', `--pidfile=${dir}/pid/carbon.pid`, 'start'], env);
  const webapp = run(PYTHON, [join(dir, 'serve.py'), String(web)], env);
  const url = `http://127.0.0.1:${web}`;
  const close = async () => {
    await Promise.all([stop(carbon.child), stop(webapp.child)]);
    rmSync(dir, { recursive: true, force: true });
  };
  try {
    await until(async () => (await fetch(`${url}/metrics/find?query=*`)).status === 200, `graphite-web (${webapp.output()})`);
    await until(() => new Promise<boolean>((resolve) => {
      const s = connect(line, '127.0.0.1', () => { s.end(); resolve(true); }).on('error', () => resolve(false));
    }), `carbon-cache (${carbon.output()})`);
  } catch (error) {
    await close();
    throw error;
  }
  return {
    url,
    async send(points) {
      await new Promise<void>((resolve, reject) => {
        const s = connect(line, '127.0.0.1', () => s.end(points.map(([p, v, t]) => `${p} ${v} ${t}\n`).join(''), resolve)).on('error', reject);
      });
      for (const path of new Set(points.map(([p]) => p))) {
        await until(async () => existsSync(join(dir, 'whisper', ...path.split('.')) + '.wsp'), `whisper file of ${path}`, 15_000);
      }
    },
    close,
  };
}
