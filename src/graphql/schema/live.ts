import { authorize, orgMember, orgRole, type Access } from '../../auth/access.ts';
import type { Principal } from '../../auth/principal.ts';
import type { RequestContext } from '../../context.ts';
import type { AlertsPausedEvent } from '../../live/feeds/alerts-paused.ts';
import type { DataSourceEvent } from '../../live/feeds/data-sources.ts';
import type { OrgMemberEvent } from '../../live/feeds/org-members.ts';
import { StreamEnd } from '../../live/stream.ts';
import type { StreamRequest } from '../../live/streams.ts';
import { builder } from '../builder.ts';
import { DataSourceNode, DataSourceType } from './data-source/node.ts';
import { encodeNodeId } from '../node-ids.ts';
import { ORG_ACCESS, OrgMemberType } from './organization/membership.ts';

builder.subscriptionType({
  description: 'Changes as they happen, over Server-Sent Events: POST (or GET) /graphql with `Accept: text/event-stream` (the graphql-sse protocol, distinct connections mode). '
    + 'A stream ends with an error event when the caller loses access (`UNAUTHENTICATED`, `FORBIDDEN`), when what it watches is gone (`NOT_FOUND`: a live query\'s data source deleted) or must subscribe again and reload (`UNAVAILABLE`: shutdown, a lost change feed, a reader too slow).',
});

const DataSourceChangeKind = builder.enumType('DataSourceChangeKind', {
  description: 'What happened to a data source.',
  values: {
    CREATED: { description: 'It was added.' },
    UPDATED: { description: 'Its fields changed, through any API, provisioning or SQL.' },
    DELETED: { description: 'It was removed; `dataSource` is null.' },
  } as const,
});

const DataSourceChangedEvent = builder.objectRef<DataSourceEvent>('DataSourceChangedEvent').implement({
  description: 'One change of a data source of the caller\'s org. Several changes of one data source that the client has not read yet arrive as one, carrying the latest state.',
  fields: (t) => ({
    kind: t.field({ type: DataSourceChangeKind, description: 'What happened.', resolve: (e) => e.kind }),
    dataSourceId: t.id({ description: 'The global id of the data source changed, also for a deletion (to evict it from a client cache).', resolve: (e) => encodeNodeId('DataSource', e.id) }),
    databaseId: t.exposeInt('id', { description: 'Its numeric id, also for a deletion.' }),
    uid: t.exposeString('uid', { nullable: true, description: 'Its uid; null only for a deletion of a data source this server never saw.' }),
    name: t.exposeString('name', { nullable: true, description: 'Its name (before deletion, for a deletion); null as `uid` is.' }),
    dataSource: t.field({
      type: DataSourceType,
      nullable: true,
      description: 'The data source as stored after the change, as the graph reads it (secrets never; its global `id` keys a client cache); null when deleted.',
      resolve: (e) => e.dataSource && new DataSourceNode(e.dataSource),
    }),
  }),
});

const OrgMemberChangeKind = builder.enumType('OrganizationMemberChangeKind', {
  description: 'What happened to a member of an org.',
  values: {
    ADDED: { description: 'The user joined the org.' },
    UPDATED: { description: 'Its role, or its user\'s login, e-mail, name or disabled state, changed.' },
    REMOVED: { description: 'The user left the org, or was deleted; `member` is null.' },
  } as const,
});

const OrgMemberChangedEvent = builder.objectRef<OrgMemberEvent>('OrganizationMemberChangedEvent').implement({
  description: 'One change of a member of the caller\'s org. Several changes of one member that the client has not read yet arrive as one, carrying the latest state.',
  fields: (t) => ({
    kind: t.field({ type: OrgMemberChangeKind, description: 'What happened.', resolve: (e) => e.kind }),
    userId: t.exposeInt('userId', { description: 'The member changed.' }),
    login: t.exposeString('login', { description: 'Its login (before removal, for a removal).' }),
    member: t.field({ type: OrgMemberType, nullable: true, description: 'The membership as stored after the change, the graph\'s `OrganizationMember` node (its global `id` keys a client cache); null when removed.', resolve: (e) => e.member }),
    nodeId: t.id({ description: 'The global id of the membership changed, also for a removal (to evict it from a client cache).', resolve: (e) => encodeNodeId('OrganizationMember', `${e.orgId}:${e.userId}`) }),
  }),
});

const AlertsPausedChangedEvent = builder.objectRef<AlertsPausedEvent>('AlertsPausedChangedEvent').implement({
  description: 'The state of the server-wide alert pause switch.',
  fields: (t) => ({
    paused: t.exposeBoolean('paused', { description: 'Whether every alert is paused.' }),
  }),
});

/**
 * What a stream needs to open: its caller, the field's declared rule as a check streams repeat
 * whenever rights may have changed (the field's wrapper checked it once already), and the signal
 * yoga aborts when the client goes away (yoga puts the Fetch request on the context).
 */
export function streamRequest(ctx: RequestContext, access: Access): StreamRequest {
  return {
    principal: ctx.caller,
    authorize: (principal: Principal) => {
      const denied = authorize(principal, access);
      if (denied) throw denied;
    },
    signal: (ctx as { request?: Request }).request?.signal,
  };
}


/** A stream's last item carries why it ended: raised here, it becomes the final error event. */
export function unlessEnded<E>(event: E | StreamEnd): E {
  if (event instanceof StreamEnd) throw event.error;
  return event;
}

/** As the queries reading the same things. */
const readDataSources = orgMember('datasources:read');
const readAlerts = orgRole('Viewer', 'alert.rules:read');

builder.subscriptionFields((t) => ({
  dataSourceChanged: t.field({
    type: DataSourceChangedEvent,
    description: 'Every creation, update and deletion of the caller\'s org\'s data sources from now on, whoever makes it (REST, GraphQL, provisioning, the command line, SQL) on whichever instance. Org members of any role (`None` included) (datasources:read); each subscriber is told of the data sources it may read at the time of the change.',
    extensions: { access: readDataSources },
    subscribe: (_root, _args, ctx) => ctx.services.live.dataSources.open(streamRequest(ctx, readDataSources)),
    resolve: (event: DataSourceEvent | StreamEnd) => unlessEnded(event),
  }),
  alertsPausedChanged: t.field({
    type: AlertsPausedChangedEvent,
    description: 'The alert pause switch: its state first, then each time it flips, whoever flips it. Org Viewers and up (alert.rules:read).',
    extensions: { access: readAlerts },
    subscribe: (_root, _args, ctx) => ctx.services.live.alertsPaused.open(streamRequest(ctx, readAlerts)),
    resolve: (event: AlertsPausedEvent | StreamEnd) => unlessEnded(event),
  }),
  orgMembersChanged: t.field({
    type: OrgMemberChangedEvent,
    description: 'Every member added to or removed from the org the request acts in from now on, and every change of a member\'s role or of its user\'s login, e-mail, name or disabled state, whoever makes it (REST, GraphQL, SQL) on whichever instance. '
      + 'Org Admins and server admins (org.users:read), as the org\'s `members`.',
    extensions: { access: ORG_ACCESS.membersRead },
    subscribe: (_root, _args, ctx) => ctx.services.live.orgMembers.open(streamRequest(ctx, ORG_ACCESS.membersRead)),
    resolve: (event: OrgMemberEvent | StreamEnd) => unlessEnded(event),
  }),
}));
