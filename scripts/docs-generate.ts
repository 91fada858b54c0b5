// `npm run docs:generate`: writes docs/errors.md and docs/permissions.md from the code's catalogues.
// Commit them with the change; test/platform/reference-docs.test.ts fails while either is stale.
import fs from 'node:fs';
import { generateReferenceDocs } from '../src/operator/reference-docs.js';

const root = new URL('../', import.meta.url);
for (const doc of await generateReferenceDocs()) {
  fs.writeFileSync(new URL(doc.path, root), doc.content);
  console.log(`${doc.path} written`);
}
// The embedded database's worker would keep the process alive a while.
process.exit(0);
