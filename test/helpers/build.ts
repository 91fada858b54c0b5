import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));

/**
 * Builds dist/, which the server and CLI processes that tests start run, as production does. The build is
 * incremental (under a second, nothing written when nothing changed), so a run always tests the current sources.
 */
export function buildServer(): void {
  const build = spawnSync(process.execPath, ['scripts/build-server.mjs'], { cwd: ROOT, encoding: 'utf8' });
  if (build.status !== 0) throw new Error(`Tests run the build (dist/); building it (npm run build:server) failed:\n${build.stderr}${build.stdout}`);
}
