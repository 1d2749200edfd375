// `npm install` (the `prepare` script) makes the embedded PostgreSQL's template here: worth having,
// never worth failing the install for.
import { loadSettings } from '../config/settings.ts';
import { makeTemplate } from './postgres-template.ts';

await makeTemplate(loadSettings({ argv: [] }).database.name).then(
  (template) => console.log(`dashgate: embedded PostgreSQL template ready in ${template}`),
  (error: Error) => console.warn(`dashgate: no embedded PostgreSQL template (each new data folder runs initdb): ${error.message}`),
);
