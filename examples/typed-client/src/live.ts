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
