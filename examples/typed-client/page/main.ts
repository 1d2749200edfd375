// The live page: lists the org's data sources, adds and edits them through typed mutations, and
// follows every change made anywhere through the `dataSourceChanged` subscription; charts a
// TestData or Prometheus series, queried through the graph and redrawn live with uPlot. Bundled by
// esbuild (build.ts); served beside the server, so it calls /graphql on its own origin.
import { createClient, CreateDataSourceMutation, GraphQLRequestError, subscribe, type ClientOptions } from '../src/client.ts';
import uPlot from 'uplot';
import { AlertsPausedSubscription, DataSourceChangedSubscription, DataSourceListQuery, SeriesQuery, UpdateDataSourceMutation } from '../src/live.ts';
import type { DataSourceListQuery as DataSourceList } from '../src/gql/graphql.ts';

/** Set by the build: send document hashes (for servers with `[graphql] trusted_documents`). */
declare const PERSISTED_DOCUMENTS: boolean;

type DataSource = DataSourceList['dataSources'][number];

const TOKEN_KEY = 'dashgate-token';
const $ = <T extends HTMLElement>(selector: string) => document.querySelector<T>(selector)!;

const state = {
  rows: new Map<number, DataSource>(),
  editing: null as { uid: string; name: string; url: string } | null,
  flash: new Set<number>(),
};

const token = sessionStorage.getItem(TOKEN_KEY);
if (!token) {
  const form = $<HTMLFormElement>('#sign-in');
  form.hidden = false;
  $('#live').textContent = 'signed out';
  form.addEventListener('submit', (event) => {
    event.preventDefault();
    sessionStorage.setItem(TOKEN_KEY, new FormData(form).get('token') as string);
    location.reload();
  });
} else {
  start({ url: location.origin, authorization: `Bearer ${token}`, persisted: PERSISTED_DOCUMENTS });
}

function start(options: ClientOptions): void {
  const client = createClient(options);
  $('#app').hidden = false;

  const reload = async () => {
    const { dataSources } = await client(DataSourceListQuery);
    state.rows = new Map(dataSources.map((ds) => [ds.id, ds]));
    render();
    chart.follow([...state.rows.values()]);
  };
  const chart = createChart(client);

  // Subscribe first, then read the list: nothing changed in between can be missed.
  const follow = () => {
    const live = $('#live');
    subscribe(options, DataSourceChangedSubscription, {}, {
      open: () => {
        live.textContent = 'live';
        live.classList.add('on');
        reload().catch(show);
      },
      next: ({ dataSourceChanged: change }) => {
        if (change.dataSource) state.rows.set(change.id, change.dataSource);
        else state.rows.delete(change.id);
        state.flash.add(change.id);
        render();
        chart.follow([...state.rows.values()]);
      },
      error: (error) => {
        live.textContent = 'offline';
        live.classList.remove('on');
        // UNAVAILABLE means subscribe again and reload; anything else (credentials) is final.
        if (error.errors.some((e) => e.extensions?.code === 'UNAVAILABLE') || error.status === 503 || error.status === 0) setTimeout(follow, 1000);
        else show(error);
      },
    });
  };
  follow();

  subscribe(options, AlertsPausedSubscription, {}, {
    next: ({ alertsPausedChanged }) => {
      const badge = $('#alerts');
      badge.textContent = alertsPausedChanged.paused ? 'alerts: paused' : 'alerts: active';
      badge.classList.toggle('paused', alertsPausedChanged.paused);
    },
  });

  $<HTMLFormElement>('#create').addEventListener('submit', (event) => {
    event.preventDefault();
    const form = event.currentTarget as HTMLFormElement;
    const fields = new FormData(form);
    client(CreateDataSourceMutation, {
      input: { name: String(fields.get('name')), type: String(fields.get('type')), access: 'proxy', url: String(fields.get('url')) },
    }).then((result) => {
      form.reset();
      show(`${result.createDataSource.message}: ${result.createDataSource.datasource.name}`);
    }, show);
  });

  $('#rows').addEventListener('click', (event) => {
    const button = (event.target as HTMLElement).closest('button');
    const row = button && state.rows.get(Number(button.dataset.id));
    if (!button || !row) return;
    if (button.dataset.action === 'edit') {
      state.editing = { uid: row.uid, name: row.name, url: row.url };
      render();
    } else if (button.dataset.action === 'cancel') {
      state.editing = null;
      render();
    } else if (button.dataset.action === 'save' && state.editing) {
      // PUT semantics: send the whole data source back, changed where the user typed.
      const edit = state.editing;
      client(UpdateDataSourceMutation, {
        uid: row.uid,
        input: {
          name: edit.name, url: edit.url, type: row.type, access: row.access, isDefault: row.isDefault, version: row.version,
          basicAuth: row.basicAuth, basicAuthUser: row.basicAuthUser, withCredentials: row.withCredentials,
          user: row.user, database: row.database, jsonData: row.jsonData,
        },
      }).then((result) => {
        state.editing = null;
        render();
        show(`${result.updateDataSourceByUid.message}: ${result.updateDataSourceByUid.datasource.name}`);
      }, show);
    }
  });
  $('#rows').addEventListener('input', (event) => {
    const input = event.target as HTMLInputElement;
    if (state.editing && (input.name === 'name' || input.name === 'url')) state.editing[input.name] = input.value;
  });
}

/** Kinds the chart can plot, with the query it sends: TestData's random walk, or Prometheus's `up`. */
const CHARTED: Record<string, Record<string, unknown>> = {
  'grafana-testdata-datasource': { scenarioId: 'random_walk', seriesCount: 1 },
  testdata: { scenarioId: 'random_walk', seriesCount: 1 },
  prometheus: { expr: 'up', range: true },
};

/**
 * The first TestData or Prometheus data source (by name), queried through the graph every two
 * seconds over the last five minutes and plotted with uPlot: typed frames in, a live series out.
 */
function createChart(client: ReturnType<typeof createClient>) {
  let uid: string | null = null;
  let plot: uPlot | null = null;
  let timer: ReturnType<typeof setInterval> | null = null;
  let updates = 0;

  const refresh = async () => {
    const current = uid;
    const ds = [...state.rows.values()].find((d) => d.uid === current);
    if (!current || !ds) return;
    const { dataSourceByUid } = await client(SeriesQuery, {
      uid: current, from: 'now-5m', to: 'now', queries: [{ refId: 'A', intervalMs: 5000, maxDataPoints: 300, ...CHARTED[ds.type] }],
    });
    const result = dataSourceByUid.query.results[0];
    if (result?.error) throw new Error(result.error);
    const fields = result?.frames[0]?.fields ?? [];
    const time = fields.find((f) => f.type === 'TIME');
    const value = fields.find((f) => f.type === 'NUMBER');
    if (!time?.numbers || !value?.numbers) return;
    // uPlot's x axis is in seconds.
    const data: uPlot.AlignedData = [time.numbers.map((t) => (t ?? 0) / 1000), value.numbers];
    const label = value.displayName ?? value.name;
    if (!plot) {
      plot = new uPlot({ width: 860, height: 240, series: [{}, { label, stroke: '#3b82f6', width: 2 }], axes: [{}, {}] }, data, $('#chart'));
    } else {
      plot.setData(data);
    }
    updates++;
    $('#chart-title').textContent = `${dataSourceByUid.name}: ${label}`;
    $('#chart-status').textContent = `${time.numbers.length} points, updated ${updates} ${updates === 1 ? 'time' : 'times'}`;
  };

  return {
    /** Picks the data source to chart from the current list; starts, keeps or stops the refresh. */
    follow(rows: DataSource[]) {
      const next = rows.filter((d) => d.type in CHARTED).sort((a, b) => a.name.localeCompare(b.name))[0]?.uid ?? null;
      if (next === uid) return;
      uid = next;
      plot?.destroy();
      plot = null;
      updates = 0;
      if (timer) clearInterval(timer);
      $('#chart-panel').hidden = uid === null;
      if (uid === null) return;
      const tick = () => refresh().catch(show);
      tick();
      timer = setInterval(tick, 2000);
    },
  };
}

function render(): void {
  const rows = [...state.rows.values()].sort((a, b) => a.name.toLowerCase().localeCompare(b.name.toLowerCase()));
  $('#rows').innerHTML = rows.map((ds) => {
    const editing = state.editing?.uid === ds.uid ? state.editing : null;
    const flash = state.flash.has(ds.id) ? ' class="flash"' : '';
    const name = editing ? `<input name="name" value="${escape(editing.name)}">` : `${escape(ds.name)}${ds.isDefault ? '<span class="default">default</span>' : ''}`;
    const url = editing ? `<input name="url" value="${escape(editing.url)}">` : escape(ds.url);
    const actions = ds.readOnly
      ? 'provisioned'
      : editing
        ? `<button data-action="save" data-id="${ds.id}">Save</button> <button data-action="cancel" data-id="${ds.id}">Cancel</button>`
        : `<button data-action="edit" data-id="${ds.id}">Edit</button>`;
    return `<tr data-uid="${escape(ds.uid)}"${flash}><td>${name}</td><td>${escape(ds.type)}</td><td>${url}</td><td>${ds.version}</td><td>${actions}</td></tr>`;
  }).join('');
  state.flash.clear();
}

function show(message: unknown): void {
  const element = $('#message');
  element.classList.toggle('error', message instanceof Error);
  element.textContent = message instanceof GraphQLRequestError ? `Error ${message.status}: ${message.message}` : String(message instanceof Error ? message.message : message);
}

function escape(text: string): string {
  return text.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
}
