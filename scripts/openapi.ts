// `npm run openapi`: writes docs/openapi.json (the document the service serves) and the typed
// client's types generated from it, test/client/schema.d.ts (openapi-typescript). Commit both;
// test/platform/openapi-document.test.ts fails while either is stale.
import fs from 'node:fs';
import { generateClientTypes } from '../test/client/generate.js';
import { generateOpenApiDocument, serializeOpenApiDocument } from '../src/operator/openapi-document.js';

const root = new URL('../', import.meta.url);
const documentFile = new URL('docs/openapi.json', root);
const typesFile = new URL('test/client/schema.d.ts', root);

const document = await generateOpenApiDocument();
fs.writeFileSync(documentFile, serializeOpenApiDocument(document));
fs.writeFileSync(typesFile, await generateClientTypes(documentFile));
const operations = Object.values(document.paths).reduce((n, item) => n + Object.keys(item).length, 0);
console.log(`docs/openapi.json: ${Object.keys(document.paths).length} paths, ${operations} operations; test/client/schema.d.ts written`);
// The embedded database's worker and the HTTP agent would keep the process alive a while.
process.exit(0);
