// `npm run openapi`: writes docs/openapi.json (the document the service serves) and the typed
// client's types generated from it (openapi-typescript) for the tests, test/client/schema.d.ts, and for the
// front end, web/src/api/schema.d.ts. Commit all three; test/platform/openapi-document.test.ts and
// test/web/client-types.test.ts fail while one is stale.
import fs from 'node:fs';
import { generateClientTypes } from '../test/client/generate.js';
import { generateOpenApiDocument, serializeOpenApiDocument } from '../src/operator/openapi-document.js';

const root = new URL('../', import.meta.url);
const documentFile = new URL('docs/openapi.json', root);
const typesFile = new URL('test/client/schema.d.ts', root);
// The front end's typed client (web/src/api/client.ts) reads the same types.
const webTypesFile = new URL('web/src/api/schema.d.ts', root);

const document = await generateOpenApiDocument();
fs.writeFileSync(documentFile, serializeOpenApiDocument(document));
const types = await generateClientTypes(documentFile);
fs.writeFileSync(typesFile, types);
fs.writeFileSync(webTypesFile, types);
const operations = Object.values(document.paths).reduce((n, item) => n + Object.keys(item).length, 0);
console.log(`docs/openapi.json: ${Object.keys(document.paths).length} paths, ${operations} operations; test/client/schema.d.ts and web/src/api/schema.d.ts written`);
// The embedded database's worker and the HTTP agent would keep the process alive a while.
process.exit(0);
