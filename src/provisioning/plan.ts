/** What data source provisioning files declare, once read and checked (datasources.ts reads them). */

/** Where something was declared, for messages. */
export interface Origin {
  file: string;
  line: number;
  col: number;
}

export interface ProvisionedDataSource {
  origin: Origin;
  orgId: number;
  name: string;
  type: string;
  access: string;
  url: string;
  uid: string | null;
  isDefault: boolean;
  jsonData: Record<string, unknown> | null;
  secureJsonData: Record<string, string>;
  editable: boolean;
  user: string;
  database: string;
  basicAuth: boolean;
  basicAuthUser: string;
  withCredentials: boolean;
  /** 0 when absent: then the file always wins. */
  version: number;
  /** Legacy top-level secrets, stored like `secureJsonData` entries of the same name. */
  password: string;
  basicAuthPassword: string;
  /** Declared in a file with `prune: true`. */
  prunable: boolean;
}

export interface ProvisionedDeletion {
  origin: Origin;
  orgId: number;
  name: string;
}

export interface DataSourcePlan {
  files: string[];
  deletions: ProvisionedDeletion[];
  dataSources: ProvisionedDataSource[];
  /** Things worth telling the operator that do not stop start-up (unknown keys, ignored versions). */
  warnings: string[];
}

export class ProvisioningError extends Error {
  readonly origin: Origin;

  constructor(origin: Origin, message: string) {
    super(`${where(origin)}: ${message}`);
    this.name = 'ProvisioningError';
    this.origin = origin;
  }
}

/** The provisioning folder or one of its files could not be read at all. */
export class ProvisioningFolderError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'ProvisioningFolderError';
  }
}

export function where(origin: Origin): string {
  return `${origin.file}:${origin.line}:${origin.col}`;
}
