// The live page: lists the org's data sources, adds and edits them through typed mutations, and
// follows every change made anywhere through the `dataSourceChanged` subscription. Bundled by
// esbuild (build.ts); served beside the server, so it calls /graphql on its own origin.
import { createClient, CreateDataSourceMutation, GraphQLRequestError, subscribe, type ClientOptions } from '../src/client.ts';
import { AlertsPausedSubscription, DataSourceChangedSubscription, DataSourceListQuery, UpdateDataSourceMutation } from '../src/live.ts';
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
  };

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
