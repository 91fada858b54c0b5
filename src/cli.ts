import fs from 'node:fs';
import { parseArgs } from 'node:util';
import { ConfigError, loadConfig } from './config.js';
import { MAX_TOKEN_LIFETIME_SECONDS, signAccessToken } from './platform/auth/jwt.js';
import { DataDirLockedError, migrate, openDatabase } from './platform/db/database.js';
import { findAccount, membershipsOf } from './modules/workspaces/workspaces.repo.js';
import { seedDemo } from './operator/demo.js';
import { FixtureError, loadFixtures } from './operator/fixtures.js';
import { openMigratedDatabase, resolveJwtSettings } from './runtime.js';
import { Recipients } from './modules/recipients/recipients.service.js';

const USAGE = `Usage: patchbay <command>

  migrate                                   apply pending database migrations
  token create --account <id|email> [--workspace <id>] [--ttl <seconds>]
                                            mint an access token (HS256 with JWT_SECRET)
  token create --recipient <email>          open a partner portal session for that address
                                            (the operator vouches for it: counts as verified);
                                            prints one line: {"token":"…"}
  fixtures load <file.json>                 load a fixture document; prints ids and tokens
  demo seed                                 create the demo workspace

Same DATABASE_URL / DATA_DIR rules as the server. Output is JSON on stdout.`;

class UsageError extends Error {}

const print = (value: unknown) => process.stdout.write(`${JSON.stringify(value, null, 2)}\n`);

async function run(argv: string[]): Promise<void> {
  const [command, sub, ...rest] = argv;
  if (!command || command === 'help' || command === '--help') {
    process.stdout.write(`${USAGE}\n`);
    return;
  }
  const known = ['migrate', 'token create', 'fixtures load', 'demo seed'];
  if (!known.includes(command) && !known.includes(`${command} ${sub ?? ''}`)) {
    throw new UsageError(`Unknown command "${argv.join(' ')}"\n\n${USAGE}`);
  }
  const config = loadConfig();
  const jwt = resolveJwtSettings(config);

  if (command === 'migrate') {
    const database = await openDatabase({ databaseUrl: config.databaseUrl, poolSize: 2, dataDir: config.dataDir });
    try {
      print({ applied: await migrate(database.db) });
    } finally {
      await database.close();
    }
    return;
  }

  const database = await openMigratedDatabase(config);
  try {
    if (command === 'token' && sub === 'create') {
      let values: { account?: string | undefined; workspace?: string | undefined; ttl?: string | undefined; recipient?: string | undefined };
      try {
        ({ values } = parseArgs({
          args: rest,
          options: { account: { type: 'string' }, workspace: { type: 'string' }, ttl: { type: 'string' }, recipient: { type: 'string' } },
          strict: true,
        }));
      } catch (error) {
        throw new UsageError(`${(error as Error).message}\n\n${USAGE}`);
      }
      if (values.recipient !== undefined) {
        if (values.account !== undefined || values.workspace !== undefined || values.ttl !== undefined) throw new UsageError('--recipient takes no other option');
        const email = values.recipient.trim();
        if (!/^[^\s@]{1,64}@[^\s@]+\.[^\s@]{2,}$/.test(email) || email.length > 254) throw new UsageError(`Not an e-mail address: ${values.recipient}`);
        const session = await new Recipients(database.db, '').operatorSession(email);
        process.stdout.write(`${JSON.stringify({ token: session.token })}\n`);
        return;
      }
      if (!values.account) throw new UsageError('--account or --recipient is required');
      if (!jwt.secret) throw new UsageError('token create needs JWT_SECRET; with JWKS_URL tokens come from your identity provider');
      const ttl = values.ttl === undefined ? 3600 : Number(values.ttl);
      if (!Number.isInteger(ttl) || ttl < 1 || ttl > MAX_TOKEN_LIFETIME_SECONDS) throw new UsageError(`--ttl must be 1..${MAX_TOKEN_LIFETIME_SECONDS} seconds`);
      const account = await findAccount(database.db, values.account);
      if (!account) throw new UsageError(`No account ${values.account}`);
      const memberships = await membershipsOf(database.db, account.id);
      let workspaceId: number;
      if (values.workspace !== undefined) {
        workspaceId = Number(values.workspace);
        if (!memberships.some((m) => m.workspace_id === workspaceId)) throw new UsageError(`Account ${account.id} is not a member of workspace ${values.workspace}`);
      } else if (memberships.length === 1) {
        workspaceId = memberships[0]!.workspace_id;
      } else {
        throw new UsageError(`Account ${account.id} has ${memberships.length} memberships; pass --workspace`);
      }
      const token = await signAccessToken(
        { secret: jwt.secret, issuer: jwt.issuer, audience: jwt.audience },
        { accountId: account.id, workspaceId, ttlSeconds: ttl },
      );
      print({ token, accountId: account.id, workspaceId, expiresIn: ttl });
    } else if (command === 'fixtures' && sub === 'load') {
      const file = rest[0];
      if (!file) throw new UsageError('fixtures load needs a file');
      let doc: unknown;
      try {
        doc = JSON.parse(fs.readFileSync(file, 'utf8'));
      } catch (error) {
        throw new UsageError(`Cannot read ${file}: ${(error as Error).message}`);
      }
      print(await loadFixtures(database.db, jwt, doc));
    } else if (command === 'demo' && sub === 'seed') {
      print(await seedDemo(database.db, jwt));
    } else {
      throw new UsageError(`Unknown command "${argv.join(' ')}"\n\n${USAGE}`);
    }
  } finally {
    await database.close();
  }
}

run(process.argv.slice(2)).catch((error: unknown) => {
  const known = error instanceof UsageError || error instanceof FixtureError || error instanceof ConfigError || error instanceof DataDirLockedError;
  process.stderr.write(`${known ? (error as Error).message : error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`);
  process.exit(known && error instanceof UsageError ? 2 : 1);
});
