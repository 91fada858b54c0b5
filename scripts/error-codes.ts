// Prints the error catalogue as a Markdown table (used to keep the README current).
import '../src/app.js';
import { errorCatalogue } from '../src/platform/http/errors.js';

const rows = [...errorCatalogue()].sort((a, b) => a[1].status - b[1].status || a[0].localeCompare(b[0]));
console.log('| code | status | meaning |\n|---|---|---|');
for (const [code, spec] of rows) console.log(`| \`${code}\` | ${spec.status} | ${spec.title} |`);
