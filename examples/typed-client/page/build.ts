import { copyFile, mkdir } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';

const here = fileURLToPath(new URL('.', import.meta.url));

export interface PageBuildOptions {
  /** Where index.html, page.css and main.js go. */
  outdir: string;
  /** Send document hashes instead of texts (servers with `[graphql] trusted_documents`). */
  persisted: boolean;
}

/** Bundles the page with esbuild: one ES module with the typed client and its documents, nothing fetched from elsewhere. */
export async function buildPage(options: PageBuildOptions): Promise<void> {
  await mkdir(options.outdir, { recursive: true });
  await build({
    entryPoints: [join(here, 'main.ts')],
    outfile: join(options.outdir, 'main.js'),
    bundle: true,
    format: 'esm',
    target: 'es2022',
    minify: true,
    sourcemap: true,
    define: { PERSISTED_DOCUMENTS: String(options.persisted) },
    logLevel: 'warning',
  });
  await Promise.all(['index.html', 'page.css'].map((file) => copyFile(join(here, file), join(options.outdir, file))));
  // The chart library's stylesheet, served with the page like the rest (nothing from a CDN).
  await copyFile(fileURLToPath(new URL('../../../node_modules/uplot/dist/uPlot.min.css', import.meta.url)), join(options.outdir, 'uPlot.min.css'));
}

// node examples/typed-client/page/build.ts [outdir] [--persisted]
if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const args = process.argv.slice(2);
  const outdir = args.find((arg) => !arg.startsWith('--')) ?? join(here, 'dist');
  await buildPage({ outdir, persisted: args.includes('--persisted') });
  console.log(`page built in ${outdir}`);
}
