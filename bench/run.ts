/**
 * `npm run bench -- <target...>`: runs benchmark targets one after the other.
 * A target is a module exporting `run()`; add one by adding a line to TARGETS.
 */
import { log, runCleanups } from './lib.js';

export interface BenchTarget {
  /** Runs the benchmark, prints its figures and writes bench/results/<target>-<time>.json. */
  run(): Promise<void>;
}

const TARGETS: Record<string, () => Promise<BenchTarget>> = {
  customers: () => import('./customers.js'),
  serials: () => import('./serials.js'),
  purchases: () => import('./purchases.js'),
  embedded: () => import('./embedded.js'),
  products: () => import('./products.js'),
  packages: () => import('./packages.js'),
  partners: () => import('./partners.js'),
  web: () => import('./web.js'),
  console: () => import('./console.js'),
  startup: () => import('./startup.js'),
  'customer-portal': () => import('./customer-portal.js'),
  instances: () => import('./instances.js'),
  webhooks: () => import('./webhooks.js'),
};

const USAGE = `usage: npm run bench -- <target...>
targets: ${Object.keys(TARGETS).join(', ')}
web: builds the front end and measures each app's initial JavaScript (no database)
console: the console's customers page in Chromium with BENCH_CUSTOMERS customers (first rows, search)
environment:
  DATABASE_URL          PostgreSQL server; the bench creates (and drops) a database of its own. Unset: embedded PGlite in a temp dir
                        (the embedded target always uses PGlite: a 100,000-row import while GET /healthz is probed)
  BENCH_KEEP=1          keep the bench database afterwards
  BENCH_CUSTOMERS       customers to seed (default 1000000)
  BENCH_SERIALS         serials to seed (default 1000000)
  BENCH_VALIDATE_SERIALS  activated serials the validate load rotates over (default 300)
  BENCH_ACTIVATE_SERIALS  unused serials the activate load draws from, four requests each (default 50000)
  BENCH_GENERATE_REQUESTS  timed generation requests of 10,000 serials (default 5)
  BENCH_PURCHASE_ITEMS  order items to seed (default 1000000; purchases, customer-portal: a fifth as many customers; products: all for one product)
  BENCH_PORTAL_ORDERS   customer-portal: orders of the one buyer whose session is measured (default 200, a serial each)
  BENCH_PRODUCT_CUSTOMERS  products: customers of the product (default 100000)
  BENCH_REVIEWS         products: reviews of the product (default 1000)
  BENCH_PRODUCT_SERIALS products: serials of the product, one event each (default 10000)
  BENCH_FILE_MB         products: size of the delivery file uploaded, then downloaded through a private link (default 200)
  BENCH_PACKAGE_BUILDS  packages: timed generate requests per variant, one after the other (default 30)
  BENCH_PACKAGE_CONNECTIONS  packages: autocannon connections for GET plugin-package and its baselines (default 50)
  BENCH_PARTNER_SALES   partners: signed sale events posted to the checkout webhook (default 10000; a tenth as many refunds follow)
  BENCH_WEBHOOK_CONCURRENCY  partners: concurrent webhook senders (default 16)
  BENCH_LEDGER_ENTRIES  partners: ledger entries in the workspace when accounting is timed (default 1000000)
  BENCH_IMPORT_ROWS     rows in the timed import (default 100000, at most 100000); sent as a user sends it:
                        POST, then the import resource polled until it finished (above the app's async threshold)
  BENCH_HEALTHZ_CONNECTIONS  embedded: keep-alive connections probing GET /healthz (default 4)
  BENCH_CONNECTIONS     autocannon connections (default 10)
  BENCH_DURATION        measured seconds per scenario (default 10; embedded: the idle /healthz probe)
  BENCH_WARMUP          unrecorded warm-up seconds per scenario (default 2)
  BENCH_POOL_SIZE       server database pool size (default 10, as DB_POOL_SIZE)
  BENCH_STARTUP_RUNS    startup: runs per command, median reported (default 7)
  BENCH_CONSOLE_RUNS    console: page loads, clicks and searches timed each (default 7)
  BENCH_WEBHOOK_EVENTS  webhooks: customer.created events (one import) delivered to a receiver on loopback (default 10000)
  BENCH_WEBHOOK_DELIVERY_CONCURRENCY  webhooks: delivery attempts at once (default 64, as WEBHOOK_CONCURRENCY)
instances (DATABASE_URL required; REDIS_URL, default redis://127.0.0.1:6379): validate and checkout booking with several
  instances of dist/server.js (built first) sharing one database and one Redis, ratios to /readyz of one instance
  BENCH_INSTANCES       instance counts measured (default 1,2,4)
  BENCH_INSTANCES_SERIALS  instances: serials seeded for validate (default 2000; BENCH_VALIDATE_SERIALS of them activated, at most a quarter)
  BENCH_INSTANCES_SALES instances: signed sales per instance count (default 500; a tenth as many refunds; BENCH_WEBHOOK_CONCURRENCY senders per instance)`;

async function main(): Promise<void> {
  const names = process.argv.slice(2);
  const unknown = names.filter((n) => !(n in TARGETS));
  if (names.length === 0 || unknown.length > 0 || names.includes('--help')) {
    if (unknown.length > 0 && !names.includes('--help')) process.stderr.write(`unknown target: ${unknown.join(', ')}\n`);
    process.stderr.write(`${USAGE}\n`);
    process.exit(names.includes('--help') ? 0 : 2);
  }
  for (const name of names) {
    log(`== ${name}`);
    const target = await TARGETS[name]!();
    try {
      await target.run();
    } finally {
      await runCleanups();
    }
  }
}

main().catch(async (error: unknown) => {
  process.stderr.write(`bench failed: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`);
  await runCleanups();
  process.exit(1);
});
