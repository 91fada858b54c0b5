#!/usr/bin/env node
// `npm run openapi:owasp`: lints docs/openapi.json with Spectral and the OWASP API Security ruleset
// (.spectral.yaml). Fails on any error on the request side — operation parameters, request bodies,
// and the components they reach — because those are what a client controls (OWASP API4: every string,
// integer and array a request may carry is bounded). Findings elsewhere (answers, headers, servers)
// are printed, counted by rule, and do not fail; docs/api/conventions.md says why they stay.
// `--json` prints the counts as JSON instead (to update the docs).
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const documentFile = 'docs/openapi.json';
const SEVERITY = ['error', 'warning', 'info', 'hint'];

const run = spawnSync(process.execPath, [path.join(root, 'node_modules/@stoplight/spectral-cli/dist/index.js'), 'lint', documentFile, '--ruleset', '.spectral.yaml', '--format', 'json', '--quiet'], {
  cwd: root,
  encoding: 'utf8',
  maxBuffer: 256 * 1024 * 1024,
});
let findings;
try {
  findings = JSON.parse(run.stdout);
} catch {
  // Spectral exits non-zero when it finds errors; only output that is not a report is a failure to run.
  console.error(`spectral did not produce a report (exit ${run.status}):\n${run.stderr || run.stdout}`);
  process.exit(2);
}

const document = JSON.parse(fs.readFileSync(path.join(root, documentFile), 'utf8'));

/** Every `$ref` below a node. */
function refsIn(node, found = new Set()) {
  if (Array.isArray(node)) for (const item of node) refsIn(item, found);
  else if (node && typeof node === 'object') {
    for (const [key, value] of Object.entries(node)) {
      if (key === '$ref' && typeof value === 'string') found.add(value);
      else refsIn(value, found);
    }
  }
  return found;
}

const pointerTarget = (ref) => ref.replace(/^#\//, '').split('/').map((p) => p.replaceAll('~1', '/').replaceAll('~0', '~'));

/** The components a request can reach (through parameters and request bodies), by JSON path. */
function requestComponents() {
  const pending = [];
  for (const item of Object.values(document.paths)) {
    for (const operation of Object.values(item)) {
      if (!operation || typeof operation !== 'object') continue;
      pending.push(...refsIn(operation.parameters ?? []), ...refsIn(operation.requestBody ?? {}));
    }
  }
  const reached = new Set();
  while (pending.length > 0) {
    const ref = pending.pop();
    if (reached.has(ref) || !ref.startsWith('#/')) continue;
    reached.add(ref);
    let node = document;
    for (const part of pointerTarget(ref)) node = node?.[part];
    pending.push(...refsIn(node));
  }
  return new Set([...reached].map((ref) => pointerTarget(ref).slice(0, 3).join('/')));
}

const reachable = requestComponents();

/** request: what a client sends; answer: what it receives; operation: its security; document: servers, schemes. */
function sideOf(findingPath) {
  const [top, second, third, fourth] = findingPath;
  if (top === 'paths') {
    if (fourth === 'parameters' || fourth === 'requestBody' || third === 'parameters') return 'request';
    return fourth === 'responses' ? 'answer' : 'operation';
  }
  if (top === 'components') {
    if (second === 'parameters' || second === 'requestBodies') return 'request';
    if (second === 'schemas') return reachable.has(`components/schemas/${third}`) ? 'request' : 'answer';
    if (second === 'headers' || second === 'responses') return 'answer';
  }
  return 'document';
}

const counts = new Map();
const failures = [];
for (const finding of findings) {
  const side = sideOf(finding.path);
  const severity = SEVERITY[finding.severity] ?? String(finding.severity);
  const key = `${side}\t${severity}\t${finding.code}`;
  counts.set(key, (counts.get(key) ?? 0) + 1);
  if (side === 'request' && finding.severity === 0) failures.push(`${finding.code}: ${finding.message} at ${finding.path.join(' › ')}`);
}

const rows = [...counts].map(([key, count]) => [...key.split('\t'), count]).sort((a, b) => a[0].localeCompare(b[0]) || a[1].localeCompare(b[1]) || a[2].localeCompare(b[2]));
if (process.argv.includes('--json')) {
  console.log(JSON.stringify(rows.map(([side, severity, rule, count]) => ({ side, severity, rule, count })), null, 2));
} else {
  console.log(`OWASP API ruleset over ${documentFile}: ${findings.length} findings`);
  for (const [side, severity, rule, count] of rows) console.log(`  ${side.padEnd(9)} ${severity.padEnd(7)} ${String(count).padStart(4)}  ${rule}`);
}
if (failures.length > 0) {
  console.error(`\n${failures.length} error(s) on the request side:`);
  for (const failure of failures) console.error(`  ${failure}`);
  process.exit(1);
}
console.log('No errors on the request side.');
