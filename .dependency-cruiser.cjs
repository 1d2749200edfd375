/**
 * The layers of src/, bottom up (docs/internals.md, "Layout"): a module may import its own layer and the
 * ones below, never one above, and nothing may import in a circle. Type-only imports count
 * (`tsPreCompilationDeps`): an interface declared low to name something built higher up is an
 * upward dependency all the same; the app assembles the whole runtime (runtime.ts) instead.
 */
const LAYERS = [
  ['errors', 'roles.ts', 'version.ts', 'project-root.ts', 'net', 'config', 'logging', 'tracing'],
  ['db'],
  ['auth'],
  ['services'],
  ['live'],
  ['upstream'],
  ['query'],
  ['context.ts', 'runtime.ts'],
  ['graphql'],
  ['rest', 'proxy', 'provisioning', 'metrics', 'bootstrap.ts'],
  ['http'],
  ['app.ts'],
  ['main.ts', 'cli', 'startup'],
];

const pattern = (names) => `^src/(${names.map((n) => n.replace('.', '\\.')).join('|')})($|/)`;

module.exports = {
  forbidden: [
    { name: 'no-circular', severity: 'error', comment: 'Import cycles hide which module depends on which.', from: {}, to: { circular: true } },
    ...LAYERS.slice(0, -1).map((layer, i) => ({
      name: `layer-${i}-imports-upward`,
      severity: 'error',
      comment: `${layer.join(', ')} may not import what sits above it: ${LAYERS.slice(i + 1).flat().join(', ')}`,
      from: { path: pattern(layer) },
      to: { path: pattern(LAYERS.slice(i + 1).flat()) },
    })),
    {
      name: 'same-layer-siblings',
      severity: 'error',
      comment: 'The REST executor, the proxy, provisioning and metrics stay independent of one another.',
      from: { path: '^src/(rest|proxy|provisioning|metrics)/' },
      to: { path: '^src/(rest|proxy|provisioning|metrics)/', pathNot: '^src/$1/' },
    },
    {
      name: 'errors-are-a-leaf',
      severity: 'error',
      comment: 'The error type and the wire messages import nothing of the app.',
      from: { path: '^src/errors/' },
      to: { path: '^src/', pathNot: '^src/errors/' },
    },
  ],
  options: {
    tsPreCompilationDeps: true,
    doNotFollow: { path: 'node_modules' },
    tsConfig: { fileName: 'tsconfig.json' },
  },
};
