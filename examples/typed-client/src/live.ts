import { graphql } from './gql/index.ts';

// The operations of the live page (page/): everything it shows or sends is typed from these.

/** A page of the list: the page reads them all, page after page (a literal `first: 1000` would count a thousand times against `[graphql] max_cost`). */
export const DataSourceListQuery = graphql(`
  query DataSourceList($first: Int!, $after: String) {
    viewer {
      currentOrganization {
        dataSources(first: $first, after: $after) {
          pageInfo { hasNextPage endCursor }
          nodes { id uid name type access url isDefault version basicAuth basicAuthUser withCredentials user database jsonData readOnly }
        }
      }
    }
  }
`);

export const UpdateDataSourceMutation = graphql(`
  mutation UpdateDataSource($id: ID!, $input: UpdateDataSourceInput!) {
    dataSourceUpdate(id: $id, input: $input) {
      dataSource { id name url version }
      userErrors { code message }
    }
  }
`);

/** `dataSource` is the data source as the list shows it (null once deleted); `dataSourceId` keys it either way. */
export const DataSourceChangedSubscription = graphql(`
  subscription DataSourceChanged {
    dataSourceChanged {
      kind
      dataSourceId
      dataSource { id uid name type access url isDefault version basicAuth basicAuthUser withCredentials user database jsonData readOnly }
    }
  }
`);

export const AlertsPausedSubscription = graphql(`
  subscription AlertsPaused {
    alertsPausedChanged { paused }
  }
`);

/** A series for the page's chart: a data source's query in the graph, answered as typed frames. */
export const SeriesQuery = graphql(`
  query Series($id: ID!, $from: String!, $to: String!, $queries: [JSONObject!]!) {
    node(id: $id) {
      ... on DataSource {
        name
        query(from: $from, to: $to, queries: $queries) {
          status
          results { refId error frames { fields { name type displayName numbers } } }
        }
      }
    }
  }
`);

/**
 * The chart's series kept current by the server: the whole answer first, then only what changed
 * (`applyLiveDelta` in live-frames.ts keeps the frames), with the viewers sharing the query.
 */
export const LiveQuerySubscription = graphql(`
  subscription LiveQuery($queries: [JSONObject!]!, $from: String!, $to: String!, $refresh: String!) {
    liveQuery(queries: $queries, from: $from, to: $to, refresh: $refresh) {
      refreshedAt
      viewers
      results {
        refId kind status error errorSource
        frames { refId length fields { name type displayName values nanos } }
        appends { frame drop values nanos }
      }
    }
  }
`);
