// The live page: lists the org's data sources, adds and edits them through typed mutations, and
// follows every change made anywhere through the `dataSourceChanged` subscription; charts a
// TestData or Prometheus series kept current by the `liveQuery` subscription, drawn with uPlot. Bundled by
// esbuild (build.ts); served beside the server, so it calls /graphql on its own origin.
import { createClient, CreateDataSourceMutation, GraphQLRequestError, subscribe, type ClientOptions } from '../src/client.ts';
import uPlot from 'uplot';
import { AlertsPausedSubscription, DataSourceChangedSubscription, DataSourceListQuery, LiveQuerySubscription, UpdateDataSourceMutation } from '../src/live.ts';
import { applyLiveDelta, type LiveResult, type LiveResultDelta } from '../src/live-frames.ts';
import type { DataSourceListQuery as DataSourceList } from '../src/gql/graphql.ts';

/** Set by the build: send document hashes (for servers with `[graphql] trusted_documents`). */
declare const PERSISTED_DOCUMENTS: boolean;

type DataSourcePage = NonNullable<NonNullable<NonNullable<DataSourceList['viewer']>['currentOrganization']>['dataSources']>;
type DataSource = DataSourcePage['nodes'][number];

const TOKEN_KEY = 'dashgate-token';
const $ = <T extends HTMLElement>(selector: string) => document.querySelector<T>(selector)!;

const state = {
  /** By global id, as the graph and its subscription key them. */
  rows: new Map<string, DataSource>(),
  editing: null as { uid: string; name: string; url: string } | null,
  flash: new Set<string>(),
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
    const rows = new Map<string, DataSource>();
    for (let after: string | null = null; ;) {
      const result: DataSourceList = await client(DataSourceListQuery, { first: 1000, after });
      const page: DataSourcePage | null | undefined = result.viewer?.currentOrganization?.dataSources;
      for (const ds of page?.nodes ?? []) rows.set(ds.id, ds);
      if (!page?.pageInfo.hasNextPage) break;
      after = page.pageInfo.endCursor ?? null;
    }
    state.rows = rows;
    render();
    chart.follow([...state.rows.values()]);
  };
  const chart = createChart(options);

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
        if (change.dataSource) state.rows.set(change.dataSourceId, change.dataSource);
        else state.rows.delete(change.dataSourceId);
        state.flash.add(change.dataSourceId);
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
    }).then(({ dataSourceCreate: { dataSource, userErrors } }) => {
      if (!dataSource) return show(refusal(userErrors));
      form.reset();
      show(`Added ${dataSource.name}`);
    }, show);
  });

  $('#rows').addEventListener('click', (event) => {
    const button = (event.target as HTMLElement).closest('button');
    const row = button && state.rows.get(button.dataset.id ?? '');
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
        id: row.id,
        input: {
          name: edit.name, url: edit.url, type: row.type, access: row.access, isDefault: row.isDefault, version: row.version,
          basicAuth: row.basicAuth, basicAuthUser: row.basicAuthUser, withCredentials: row.withCredentials,
          user: row.user, database: row.database, jsonData: row.jsonData,
        },
      }).then(({ dataSourceUpdate: { dataSource, userErrors } }) => {
        if (!dataSource) return show(refusal(userErrors));
        state.editing = null;
        render();
        show(`Saved ${dataSource.name} (version ${dataSource.version})`);
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
 * The first TestData or Prometheus data source (by name), over the last five minutes, kept current
 * by the `liveQuery` subscription (every two seconds, one upstream run however many watch) and
 * plotted with uPlot: the server sends only what changed, `applyLiveDelta` keeps the frames.
 */
function createChart(options: ClientOptions) {
  let uid: string | null = null;
  let plot: uPlot | null = null;
  let stop: (() => void) | null = null;
  let updates = 0;
  let results = new Map<string, LiveResult>();

  const draw = (name: string, viewers: number, refreshedAt: number) => {
    const result = results.get('A');
    if (result?.error) throw new Error(result.error);
    const fields = result?.frames?.[0]?.fields ?? [];
    const time = fields.find((f) => f.type === 'TIME');
    const value = fields.find((f) => f.type === 'NUMBER');
    if (!time || !value) return;
    // uPlot's x axis is in seconds.
    const data: uPlot.AlignedData = [time.values.map((t) => Number(t ?? 0) / 1000), value.values as Array<number | null>];
    const label = (value.displayName as string | null) ?? value.name;
    if (!plot) {
      plot = new uPlot({ width: 860, height: 240, series: [{}, { label, stroke: '#3b82f6', width: 2 }], axes: [{}, {}] }, data, $('#chart'));
    } else {
      plot.setData(data);
    }
    updates++;
    $('#chart-title').textContent = `${name}: ${label}`;
    const at = new Date(refreshedAt).toLocaleTimeString('en-GB', { hour12: false });
    $('#chart-status').textContent = `${time.values.length} points, updated ${updates} ${updates === 1 ? 'time' : 'times'}; `
      + `${viewers} ${viewers === 1 ? 'viewer' : 'viewers'}, last refresh ${at}`;
  };

  return {
    /** Picks the data source to chart from the current list; starts, keeps or stops its live query. */
    follow(rows: DataSource[]) {
      const ds = rows.filter((d) => d.type in CHARTED).sort((a, b) => a.name.localeCompare(b.name))[0] ?? null;
      if ((ds?.uid ?? null) === uid) return;
      uid = ds?.uid ?? null;
      stop?.();
      stop = null;
      plot?.destroy();
      plot = null;
      updates = 0;
      results = new Map();
      $('#chart-panel').hidden = ds === null;
      if (ds === null) return;
      const queries = [{ refId: 'A', datasource: { uid: ds.uid }, intervalMs: 5000, maxDataPoints: 300, ...CHARTED[ds.type] }];
      stop = subscribe(options, LiveQuerySubscription, { queries, from: 'now-5m', to: 'now', refresh: '2s' }, {
        next: ({ liveQuery }) => {
          results = applyLiveDelta(results, liveQuery.results as LiveResultDelta[]);
          try {
            draw(ds.name, liveQuery.viewers, liveQuery.refreshedAt);
          } catch (error) {
            show(error);
          }
        },
        error: show,
      });
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

/** Why a mutation changed nothing: its user errors, as REST words them. */
function refusal(userErrors: ReadonlyArray<{ code: string; message: string }>): Error {
  return new Error(userErrors.map((e) => `${e.code}: ${e.message}`).join('; '));
}

function escape(text: string): string {
  return text.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
}
