import { ConfigError, loadConfig } from './config.js';
import { DataDirLockedError, type Database } from './platform/db/database.js';
import { AppError } from './platform/http/errors.js';
import { FixtureError } from './operator/fixtures.js';
import { OperatorError } from './operator/provision.js';
import { openMigratedDatabase, resolveJwtSettings } from './runtime.js';
import { parseOptions, UsageError } from './cli/args.js';
import { type Command, COMMANDS } from './cli/commands.js';

// The `patchbay` operator command. stdout carries JSON only (help text when asked for it), so
// `| jq` always works; every message goes to stderr. Exit 0 on success, 2 for a usage error,
// 1 for anything else.

const line = (c: Command) => `  ${c.name}${c.synopsis ? ` ${c.synopsis}` : ''}\n      ${c.summary}`;

const USAGE = `Usage: patchbay <command>   (npx patchbay … or ./bin/patchbay.js …)

${COMMANDS.map(line).join('\n')}

"patchbay <command> --help" explains a command. Same DATABASE_URL / DATA_DIR rules as the server.
Output is JSON on stdout; messages go to stderr; exit 2 for a usage error, 1 for other failures.`;

function commandHelp(c: Command): string {
  return [
    `Usage: patchbay ${c.name}${c.synopsis ? ` ${c.synopsis}` : ''}`,
    '',
    c.summary[0]!.toUpperCase() + c.summary.slice(1) + '.',
    ...(c.details ? ['', c.details] : []),
    ...(c.examples?.length ? ['', 'Examples:', ...c.examples.map((e) => `  ${e}`)] : []),
  ].join('\n');
}

const print = (value: unknown, oneLine = false) => process.stdout.write(`${JSON.stringify(value, null, oneLine ? undefined : 2)}\n`);

async function run(argv: string[]): Promise<void> {
  const [first, second] = argv;
  if (!first || first === 'help' || first === '--help' || first === '-h') {
    process.stdout.write(`${USAGE}\n`);
    return;
  }
  const command = COMMANDS.find((c) => c.name === first) ?? COMMANDS.find((c) => c.name === `${first} ${second ?? ''}`);
  const wantsHelp = argv.includes('--help') || argv.includes('-h');
  if (!command) {
    const group = COMMANDS.filter((c) => c.name.startsWith(`${first} `));
    if (group.length > 0 && wantsHelp && (second === '--help' || second === '-h')) {
      process.stdout.write(`Usage: patchbay ${first} <${group.map((c) => c.name.split(' ')[1]).join('|')}>\n\n${group.map(line).join('\n')}\n`);
      return;
    }
    throw new UsageError(`Unknown command "${argv.join(' ')}"\n\n${USAGE}`);
  }
  if (wantsHelp) {
    process.stdout.write(`${commandHelp(command)}\n`);
    return;
  }
  const args = argv.slice(command.name.split(' ').length);
  let parsed: ReturnType<typeof parseOptions>;
  try {
    parsed = parseOptions(args, command.options, command.positionals ?? 0);
  } catch (error) {
    throw new UsageError(`${(error as Error).message}\nRun "patchbay ${command.name} --help" for its options.`);
  }

  const config = loadConfig();
  const jwt = resolveJwtSettings(config);
  let database: Database | undefined;
  try {
    await command.run(
      {
        config,
        jwt,
        db: async () => (database ??= await openMigratedDatabase(config)).db,
        print,
      },
      parsed.values,
      parsed.positionals,
    );
  } finally {
    await database?.close();
  }
}

run(process.argv.slice(2)).catch((error: unknown) => {
  const known = error instanceof UsageError || error instanceof OperatorError || error instanceof FixtureError || error instanceof ConfigError || error instanceof DataDirLockedError;
  // A use case's own refusal (BILLING_NOT_ELIGIBLE, NOT_FOUND, INVALID_WINDOW…): its code and message;
  // a 400 means the command line asked for something invalid, so it counts as a usage error.
  const domain = error instanceof AppError;
  const message = domain
    ? `${error.code}: ${error.message}`
    : known
      ? (error as Error).message
      : error instanceof Error
        ? (error.stack ?? error.message)
        : String(error);
  process.stderr.write(`${message}\n`);
  process.exit(error instanceof UsageError || (domain && error.status === 400) ? 2 : 1);
});
