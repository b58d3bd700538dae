// Bundles the dashboard: src/main.js (Chart.js included) into one script and one stylesheet,
// with index.html beside them, so the page needs nothing from the network.
// Usage: node web/build.mjs OUTDIR [--dev]   (--dev: not minified, with inline source maps)
// Writes OUTDIR/index.html, OUTDIR/assets/app.js, OUTDIR/assets/app.css.

import { build } from 'esbuild';
import { mkdir, copyFile, rm } from 'node:fs/promises';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const here = dirname(fileURLToPath(import.meta.url));

export async function buildDashboard(outdir, { dev = false } = {}) {
  const out = resolve(outdir);
  await mkdir(join(out, 'assets'), { recursive: true });
  await rm(join(out, 'assets', 'app.js.map'), { force: true });
  const result = await build({
    entryPoints: { app: join(here, 'src', 'main.js') },
    bundle: true,
    outdir: join(out, 'assets'),
    format: 'iife',
    platform: 'browser',
    target: ['es2022', 'chrome110', 'firefox110', 'safari16'],
    minify: !dev,
    sourcemap: dev ? 'inline' : false,
    legalComments: 'eof',
    logLevel: 'warning',
    metafile: true,
    define: { 'process.env.NODE_ENV': dev ? '"development"' : '"production"' },
  });
  await copyFile(join(here, 'index.html'), join(out, 'index.html'));
  return result;
}

if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const args = process.argv.slice(2);
  const outdir = args.find((a) => !a.startsWith('--'));
  if (!outdir) {
    console.error('usage: node web/build.mjs OUTDIR [--dev]');
    process.exit(2);
  }
  try {
    const result = await buildDashboard(outdir, { dev: args.includes('--dev') });
    const sizes = Object.entries(result.metafile.outputs).map(
      ([file, o]) => `${file.split('/').slice(-1)[0]} ${(o.bytes / 1024).toFixed(0)} KiB`,
    );
    console.log(`web: built ${resolve(outdir)} (${sizes.join(', ')})`);
  } catch (err) {
    console.error(`web: build failed: ${err.message}`);
    process.exit(1);
  }
}
