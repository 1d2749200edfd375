import { lexicographicSortSchema, printSchema, type GraphQLSchema } from 'graphql';
import { enforceDeclaredAccess } from '../access.ts';
import { builder } from '../builder.ts';
import { enforceInputLimits } from '../input-limits.ts';
import { resolveGlobalIdsInPlace } from '../node-ids.ts';
import { answerNodesFromPages } from '../paging.ts';
import { publicSchemaOf } from '../public-schema.ts';
import './scalars.ts';
import './node.ts';
import './data-source/node.ts';
import './data-source/health.ts';
import './data-source/mutations.ts';
import './data-source/permissions.ts';
import './api-key.ts';
import './admin.ts';
import './user/node.ts';
import './user/profile.ts';
import './organization/membership.ts';
import './alert.ts';
import './live.ts';
import './live-query.ts';
import './data-query.ts';
import './frontend-settings.ts';
import './organization/node.ts';
import './viewer.ts';
import './team/node.ts';
import './team/queries.ts';
import './team/mutations.ts';
import './service-account/node.ts';
import './service-account/queries.ts';
import './service-account/mutations.ts';
import './organization/mutations.ts';
import './user/mutations.ts';
import './preferences.ts';

let schema: GraphQLSchema | null = null;
let publicSchema: GraphQLSchema | null = null;

/**
 * The full schema, built once (Pothos builders can only be converted once): the graph and the
 * REST-only root fields, which the REST rows compile against.
 */
export function getSchema(): GraphQLSchema {
  if (!schema) {
    schema = builder.toSchema();
    resolveGlobalIdsInPlace(schema);
    answerNodesFromPages(schema);
    // Limits first, so that the access check wraps them and runs before them.
    enforceInputLimits(schema);
    enforceDeclaredAccess(schema);
  }
  return schema;
}

/** What `/graphql` serves (GraphiQL, introspection, trusted documents): the full schema without its REST-only root fields. */
export function getPublicSchema(): GraphQLSchema {
  publicSchema ??= publicSchemaOf(getSchema());
  return publicSchema;
}

/** The committed SDL form, of the public schema: sorted, so the file diffs cleanly. */
export function printSdl(): string {
  return `${printSchema(lexicographicSortSchema(getPublicSchema()))}\n`;
}
