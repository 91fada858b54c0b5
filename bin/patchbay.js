#!/usr/bin/env node
// Runs the compiled CLI (dist/, built by `npm install` / `npm ci` through the prepare script, or `npm run build`).
// In development `npm run cli -- <command>` runs the TypeScript source through tsx instead.
import fs from 'node:fs';

const entry = new URL('../dist/cli.js', import.meta.url);
if (!fs.existsSync(entry)) {
  process.stderr.write('patchbay: dist/cli.js is missing. Build it with "npm run build" (npm install and npm ci build it too).\n');
  process.exit(1);
}
await import(entry.href);
