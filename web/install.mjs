// Installs web/'s npm packages exactly as package-lock.json says (`npm ci`), unless
// web/node_modules already holds that lock's packages; then touches STAMP. The build calls it
// (CMakeLists.txt, "web dashboard"): several build trees share web/node_modules, so the install
// is skipped when it is already current and serialised with a lock directory (in the temporary directory) when it is not.
// Usage: node web/install.mjs [STAMP]

import { spawnSync } from 'node:child_process';
import { mkdirSync, readFileSync, rmSync, statSync, writeFileSync, existsSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { tmpdir } from 'node:os';
import { createHash } from 'node:crypto';
import { fileURLToPath } from 'node:url';

const here = dirname(fileURLToPath(import.meta.url));
const stamp = process.argv[2];
const lock = readFileSync(join(here, 'package-lock.json'), 'utf8');
const marker = join(here, 'node_modules', '.benchlab-installed-lock.json');
// Outside web/ (npm ci empties node_modules; the tree stays clean), one per checkout.
const mutex = join(
  tmpdir(),
  `benchlab-web-npm-ci-${createHash('sha256').update(here).digest('hex').slice(0, 12)}.lock`,
);

const current = () => existsSync(marker) && readFileSync(marker, 'utf8') === lock;
const sleep = (ms) => Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, ms);

function acquire() {
  const deadline = Date.now() + 10 * 60 * 1000;
  for (;;) {
    try {
      mkdirSync(mutex);
      return;
    } catch (err) {
      if (err.code !== 'EEXIST') throw err;
      // A lock left by an install that died (older than 10 minutes) is taken over.
      try {
        if (Date.now() - statSync(mutex).mtimeMs > 10 * 60 * 1000)
          rmSync(mutex, { recursive: true, force: true });
      } catch {
        /* gone meanwhile */
      }
      if (Date.now() > deadline)
        throw new Error(`web: ${mutex} held for 10 minutes; remove it if no npm runs`);
      sleep(500);
    }
  }
}

if (!current()) {
  acquire();
  try {
    if (!current()) {
      console.log('web: npm ci (web/package-lock.json)');
      const npm = spawnSync('npm', ['ci', '--no-audit', '--no-fund', '--loglevel=error'], {
        cwd: here,
        stdio: 'inherit',
      });
      if (npm.error || npm.status !== 0) {
        console.error(
          `web: npm ci failed (${npm.error ? npm.error.message : `exit ${npm.status}`}): it needs the npm registry`,
        );
        process.exit(1);
      }
      writeFileSync(marker, lock);
    }
  } finally {
    rmSync(mutex, { recursive: true, force: true });
  }
}
if (stamp) {
  mkdirSync(dirname(stamp), { recursive: true });
  writeFileSync(stamp, `${new Date().toISOString()}\n`);
}
