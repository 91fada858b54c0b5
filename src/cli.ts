import { setFlagsFromString } from 'node:v8';
import type { Database } from './platform/db/database.js';
import { parseOptions, UsageError } from './cli/args.js';
import { type Command, COMMANDS } from './cli/commands.js';

// A command is over in about a second, so the embedded database's WebAssembly runs as V8's baseline compiler
// (Liftoff) makes it and is never recompiled by the optimising one: that compilation costs a short command about
// 0.35 s of CPU on two cores and pays back only after seconds of queries (docs/performance.md, "Start-up"). The
// server keeps the default. Set before anything compiles WebAssembly; it changes nothing on PostgreSQL.
setFlagsFromString('--liftoff-only');

// The `patchbay` operator command. stdout carries JSON only (help text when asked for it), so
// `| jq` always works; every message goes to stderr. Exit 0 on success, 2 for a usage error,
// 1 for anything else.
//
// Start-up time is most of a command's time: only the option parser and the command table load
// before help is printed or the options are checked; configuration, the database and each command's
// use cases are imported when the command needs them (docs/performance.md, "Start-up").

const line = (c: Command) => `  ${c.name}${c.synopsis ? ` ${c.synopsis}` : ''}\n      ${c.summary}`;

const USAGE = `Usage: patchbay <command>   (npx patchbay … or ./bin/patchbay.js …)

${COMMANDS.map(line).join('\n')}

"patchbay <command> --help" explains a command. Same DATABASE_URL / DATA_DIR rules as the server.
Output is JSON on stdout; messages go to stderr; exit 2 for a usage error, 1 for other failures.`;

async function commandHelp(c: Command): Promise<string> {
  const details = typeof c.details === 'function' ? await c.details() : c.details;
  return [
    `Usage: patchbay ${c.name}${c.synopsis ? ` ${c.synopsis}` : ''}`,
    '',
    c.summary[0]!.toUpperCase() + c.summary.slice(1) + '.',
    ...(details ? ['', details] : []),
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
    process.stdout.write(`${await commandHelp(command)}\n`);
    return;
  }
  const args = argv.slice(command.name.split(' ').length);
  let parsed: ReturnType<typeof parseOptions>;
  try {
    parsed = parseOptions(args, command.options, command.positionals ?? 0);
  } catch (error) {
    throw new UsageError(`${(error as Error).message}\nRun "patchbay ${command.name} --help" for its options.`);
  }

  const [{ loadConfig }, { openMigratedDatabase, resolveJwtSettings }] = await Promise.all([import('./config.js'), import('./runtime.js')]);
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

/** The line an error prints and the exit code it ends with. */
async function failure(error: unknown): Promise<{ message: string; code: 1 | 2 }> {
  if (error instanceof UsageError) return { message: error.message, code: 2 };
  try {
    // Each class is imported only to ask, cheapest first: a command that threw one has loaded its module already,
    // and the use-case modules load only for an error none of the others explains.
    const { AppError } = await import('./platform/http/errors.js');
    // A use case's own refusal (BILLING_NOT_ELIGIBLE, NOT_FOUND, INVALID_WINDOW…): its code and message;
    // a 400 means the command line asked for something invalid, so it counts as a usage error.
    if (error instanceof AppError) return { message: `${error.code}: ${error.message}`, code: error.status === 400 ? 2 : 1 };
    const [{ DataDirLockedError }, { ConfigError }] = await Promise.all([import('./platform/db/dir-lock.js'), import('./config.js')]);
    if (error instanceof DataDirLockedError || error instanceof ConfigError) return { message: error.message, code: 1 };
    const [{ FixtureError }, { OperatorError }] = await Promise.all([import('./operator/fixtures.js'), import('./operator/provision.js')]);
    if (error instanceof FixtureError || error instanceof OperatorError) return { message: error.message, code: 1 };
  } catch {
    // A module that cannot load cannot have thrown the error: its stack below says what happened.
  }
  return { message: error instanceof Error ? (error.stack ?? error.message) : String(error), code: 1 };
}

run(process.argv.slice(2)).catch(async (error: unknown) => {
  const { message, code } = await failure(error);
  process.stderr.write(`${message}\n`);
  process.exit(code);
});
