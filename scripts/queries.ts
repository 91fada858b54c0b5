// `npm run queries`: writes src/queries/<area>.sql, the SQL each repository function sends (src/operator/query-snapshots.ts).
// Commit them with the change; test/platform/query-snapshots.test.ts fails while one is stale.
import fs from 'node:fs';
import { generateQuerySnapshots } from '../src/operator/query-snapshots.js';

const root = new URL('../', import.meta.url);
const files = await generateQuerySnapshots();
fs.mkdirSync(new URL('src/queries/', root), { recursive: true });
for (const name of fs.readdirSync(new URL('src/queries/', root))) {
  if (!files.has(`src/queries/${name}`)) fs.rmSync(new URL(`src/queries/${name}`, root));
}
for (const [file, content] of files) fs.writeFileSync(new URL(file, root), content);
console.log(`${files.size} files written to src/queries/`);
process.exit(0);
