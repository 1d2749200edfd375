/**
 * Summarises a `.cpuprofile` (as `BENCH_CPU_PROFILE_DIR` writes them) by function and by file:
 * self time, total time (each function counted once per sample however deep it recurses), as
 * shares of the samples in which the process was not idle. Shares compare across profiles of one
 * run; absolute time on a shared machine does not.
 *
 *   node bench/profile-summary.ts <file.cpuprofile> [top=40] [filter]
 */
import { readFileSync } from 'node:fs';

interface ProfileNode {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
  children?: number[];
}

const [file, topArg, filter = ''] = process.argv.slice(2);
if (!file) {
  console.error('usage: node bench/profile-summary.ts <file.cpuprofile> [top] [filter]');
  process.exit(2);
}
const top = Number(topArg ?? 40);
const profile = JSON.parse(readFileSync(file, 'utf8')) as { nodes: ProfileNode[]; samples: number[] };
const nodes = new Map(profile.nodes.map((node) => [node.id, node]));
const parent = new Map<number, number>();
for (const node of profile.nodes) for (const child of node.children ?? []) parent.set(child, node.id);
const hits = new Map<number, number>();
for (const id of profile.samples) hits.set(id, (hits.get(id) ?? 0) + 1);

const fileOf = (node: ProfileNode) => node.callFrame.url.replace(/^file:\/\/.*?\/(src|bench|test|node_modules)\//, '$1/') || node.callFrame.functionName;
const nameOf = (node: ProfileNode) => `${node.callFrame.functionName || '(anonymous)'} ${fileOf(node)}:${node.callFrame.lineNumber + 1}`;
const self = new Map<string, number>();
const total = new Map<string, number>();
const byFile = new Map<string, number>();
const add = (map: Map<string, number>, key: string, count: number) => map.set(key, (map.get(key) ?? 0) + count);
let idle = 0;
for (const [id, count] of hits) {
  const node = nodes.get(id)!;
  if (node.callFrame.functionName === '(idle)') {
    idle += count;
    continue;
  }
  add(self, nameOf(node), count);
  add(byFile, fileOf(node), count);
  const seen = new Set<string>();
  for (let at: number | undefined = id; at !== undefined; at = parent.get(at)) {
    const name = nameOf(nodes.get(at)!);
    if (!seen.has(name)) add(total, name, count);
    seen.add(name);
  }
}
const busy = profile.samples.length - idle;
console.log(`${profile.samples.length} samples, ${busy} busy`);
for (const [title, map] of [['self by function', self], ['self by file', byFile], ['total by function', total]] as const) {
  console.log(`\n${title}`);
  [...map].filter(([key]) => key.includes(filter)).sort((a, b) => b[1] - a[1]).slice(0, top)
    .forEach(([key, count]) => console.log(`${((100 * count) / busy).toFixed(1).padStart(6)}%  ${key}`));
}
