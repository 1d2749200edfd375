import { graphql } from './gql/index.ts';

// The operations of the live page (page/): everything it shows or sends is typed from these.

export const DataSourceListQuery = graphql(`
  query DataSourceList {
    dataSources { id uid name type access url isDefault version basicAuth basicAuthUser withCredentials user database jsonData readOnly }
  }
`);

export const UpdateDataSourceMutation = graphql(`
  mutation UpdateDataSource($uid: String!, $input: UpdateDataSourceInput!) {
    updateDataSourceByUid(uid: $uid, input: $input) { message datasource { id uid name url version } }
  }
`);

export const DataSourceChangedSubscription = graphql(`
  subscription DataSourceChanged {
    dataSourceChanged {
      kind
      id
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
  query Series($uid: String!, $from: String!, $to: String!, $queries: [JSONObject!]!) {
    dataSourceByUid(uid: $uid) {
      name
      query(from: $from, to: $to, queries: $queries) {
        status
        results { refId error frames { fields { name type displayName numbers } } }
      }
    }
  }
`);
