import { describe, expect, it } from '@jest/globals';
import { parseFile } from '../../src/provisioning/datasource-file.ts';
import { ProvisioningError, type DataSourcePlan } from '../../src/provisioning/datasources.ts';

// One provisioning file's format, read as the original reads it: pure, no folder, no database.

const env = Object.freeze({ PROM_URL: 'http://prom:9090', PASS: 's3cret', YES: 'true' });
const FILE = 'datasources/a.yaml';

function read(text: string): DataSourcePlan {
  const plan: DataSourcePlan = { files: [], deletions: [], dataSources: [], warnings: [] };
  parseFile(FILE, text, env, plan);
  return plan;
}

function refusal(text: string): string | null {
  try {
    read(text);
    return null;
  } catch (error) {
    if (!(error instanceof ProvisioningError)) throw error;
    return error.message;
  }
}

describe('parseFile', () => {
  it('reads a data source with the defaults, $VAR expanded in values, secrets kept apart', () => {
    const plan = read(`apiVersion: 1
datasources:
  - name: prom
    type: prometheus
    url: $PROM_URL
    isDefault: \${YES}
    jsonData:
      httpMethod: POST
      nested: { a: [1, "$PROM_URL"] }
    secureJsonData:
      basicAuthPassword: $PASS
`);
    expect(plan.warnings).toEqual([]);
    expect(plan.deletions).toEqual([]);
    expect(plan.dataSources).toHaveLength(1);
    expect(plan.dataSources[0]).toMatchObject({
      origin: { file: FILE, line: 3, col: 5 }, orgId: 1, name: 'prom', type: 'prometheus', url: 'http://prom:9090', isDefault: true,
      jsonData: { httpMethod: 'POST', nested: { a: [1, 'http://prom:9090'] } }, secureJsonData: { basicAuthPassword: 's3cret' },
      version: 0, prunable: false,
    });
  });

  it('reads deletions and prune, and warns of what it ignores', () => {
    const plan = read(`prune: true
deleteDatasources:
  - name: old
    orgId: 2
datasources:
  - name: new
    type: loki
    colour: red
`);
    expect(plan.deletions).toEqual([{ origin: { file: FILE, line: 3, col: 5 }, orgId: 2, name: 'old' }]);
    expect(plan.dataSources.map((ds) => [ds.name, ds.prunable])).toEqual([['new', true]]);
    expect(plan.warnings).toEqual([
      `${FILE}:1:1: no apiVersion; reading it as apiVersion 1`,
      `${FILE}:8:5: unknown key datasources[0].colour ignored`,
    ]);
  });

  it('reads an empty file as nothing', () => {
    expect(read('')).toEqual({ files: [], deletions: [], dataSources: [], warnings: [] });
  });

  it.each([
    ['invalid YAML', 'datasources: [\n', /^datasources\/a\.yaml:\d+:\d+: invalid YAML: /],
    ['not a mapping', '- a\n- b\n', `${FILE}:1:1: expected a mapping with apiVersion, datasources and deleteDatasources`],
    ['another apiVersion', 'apiVersion: 2\n', `${FILE}:1:13: unsupported apiVersion (only 1 is supported)`],
    ['datasources not a list', 'apiVersion: 1\ndatasources: {}\n', `${FILE}:2:14: datasources must be a list`],
    ['no name', 'apiVersion: 1\ndatasources:\n  - type: loki\n', /name is required$/],
    ['no type', 'apiVersion: 1\ndatasources:\n  - name: x\n', /\(x\): type is required$/],
    ['a boolean that is none', 'apiVersion: 1\ndatasources:\n  - name: x\n    type: loki\n    isDefault: maybe\n', /must be true or false, got "maybe"$/],
    ['an orgId that is no integer', 'apiVersion: 1\ndatasources:\n  - name: x\n    type: loki\n    orgId: 1.5\n', /must be an integer, got "1.5"$/],
    ['a mapping where a value belongs', 'apiVersion: 1\ndatasources:\n  - name: { a: 1 }\n    type: loki\n', /must be a single value, not a mapping$/],
    ['a key twice', 'apiVersion: 1\napiVersion: 1\n', /invalid YAML: /],
  ])('refuses %s, saying where', (_name, text, message) => {
    const said = refusal(text);
    if (typeof message === 'string') expect(said).toBe(message);
    else expect(said).toMatch(message);
  });
});
