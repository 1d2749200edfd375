import type { MikroORM } from '@mikro-orm/postgresql';
import type { ChangeListener } from '../../db/change-listener.ts';
import type { Logger } from '../../logging/logger.ts';
import type { DataSourceAccessCache } from '../../services/data-source-permissions.ts';
import type { DataSourceService } from '../../services/data-sources.ts';
import type { LiveStreams } from '../streams.ts';
import { AlertsPausedFeed } from './alerts-paused.ts';
import { DataSourceFeed } from './data-sources.ts';
import { OrgMemberFeed } from './org-members.ts';

/** The change feeds subscriptions read, each turning one kind of committed change into streams. */
export interface ChangeFeeds {
  dataSources: DataSourceFeed;
  orgMembers: OrgMemberFeed;
  alertsPaused: AlertsPausedFeed;
}

export function createChangeFeeds(streams: LiveStreams, orm: MikroORM, changes: ChangeListener, log: Logger, dataSources: DataSourceService, access: DataSourceAccessCache): ChangeFeeds {
  return {
    dataSources: new DataSourceFeed(streams, orm, dataSources, changes, log, access),
    orgMembers: new OrgMemberFeed(streams, orm, changes, log),
    alertsPaused: new AlertsPausedFeed(streams, orm, changes, log),
  };
}
