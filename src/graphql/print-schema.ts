import { writeFileSync } from 'node:fs';
import { printSdl } from './schema/index.ts';

// `npm run schema:print` rewrites the committed SDL; a test fails when it drifts from the code.
writeFileSync(new URL('../../schema/schema.graphql', import.meta.url), printSdl());
