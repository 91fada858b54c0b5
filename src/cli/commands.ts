import fs from 'node:fs';
import type { Config } from '../config.js';
import type { JwtSettings } from '../platform/auth/jwt.js';
import { PERMISSIONS } from '../platform/auth/permissions.js';
import type { Database } from '../platform/db/database.js';
import type { CreateProductBody } from '../modules/products/index.js';
import type { GenerateBody } from '../modules/serials/index.js';
import { checkBody, defined, email, flag, id, optionalInt, type OptionSpec, type OptionValues, permissions, products, required, str, UsageError } from './args.js';
import { lazy } from './lazy.js';

// Only types and light modules load with the table (it is all `patchbay --help` needs); use cases load when run.
const provision = lazy(() => import('../operator/provision.js'));
const fixtures = lazy(() => import('../operator/fixtures.js'));
const demo = lazy(() => import('../operator/demo.js'));
const workspaces = lazy(() => import('../modules/workspaces/index.js'));
const productSchemas = () => import('../modules/products/index.js');
const serialSchemas = () => import('../modules/serials/index.js');
const jwtModule = () => import('../platform/auth/jwt.js');

export interface CliContext {
  config: Config;
  jwt: JwtSettings;
  /**
   * The database, migrated, opened on first use and closed when the command ends. Check every
   * option first: a usage error must not open (on the embedded database: lock) the database.
   */
  db(): Promise<Database['db']>;
  /** Prints JSON on stdout: indented, or on one line. */
  print(value: unknown, oneLine?: boolean): void;
}

export interface Command {
  /** `group sub`, e.g. `workspace create`. */
  name: string;
  /** The arguments after the name, as shown in the usage. */
  synopsis: string;
  summary: string;
  /** More help, shown by `--help` (a function when it needs a module the command table should not load). */
  details?: string | (() => Promise<string>);
  examples?: string[];
  options: OptionSpec;
  /** Positional arguments accepted (fixtures load takes the file). */
  positionals?: number;
  run(ctx: CliContext, values: OptionValues, positionals: string[]): Promise<void>;
}

const s = { type: 'string' } as const;
const b = { type: 'boolean' } as const;

const workspaceOf = (values: OptionValues) => id(required(values, 'workspace'), 'workspace');

const MEMBER_DETAILS = `--permissions takes names from the catalogue, comma-separated, or * for all (an empty value: none):
${Object.keys(PERMISSIONS).map((p) => `  ${p}`).join('\n')}
--products is "all" or product ids (patchbay product list), comma-separated (an empty value: none).
An owner holds every permission and every product. A workspace keeps at least one owner.`;

export const COMMANDS: Command[] = [
  {
    name: 'migrate',
    synopsis: '',
    summary: 'apply pending database migrations',
    options: {},
    // Opens the database itself: ctx.db() would migrate before it could report what it applied.
    async run(ctx) {
      const { migrate, openDatabase } = await import('../platform/db/database.js');
      const database = await openDatabase({ databaseUrl: ctx.config.databaseUrl, poolSize: 2, dataDir: ctx.config.dataDir });
      try {
        ctx.print({ applied: await migrate(database.db) });
      } finally {
        await database.close();
      }
    },
  },
  {
    name: 'workspace create',
    synopsis: '--name <name> [--billing-eligible] [--storefront-url <url>] [--allow-duplicate]',
    summary: 'create a workspace (a name already in use is refused)',
    details:
      'Prints the workspace with its id. --billing-eligible allows serial generation. A name another workspace already has\n' +
      '(case and surrounding spaces ignored) is refused unless --allow-duplicate is given.',
    examples: ['patchbay workspace create --name "Acme Audio" --billing-eligible'],
    options: { name: s, 'billing-eligible': b, 'storefront-url': s, 'allow-duplicate': b },
    async run(ctx, v) {
      const name = required(v, 'name').trim();
      if (name.length > 200) throw new UsageError('--name must be at most 200 characters');
      const storefrontUrl = str(v, 'storefront-url');
      if (storefrontUrl !== undefined && !/^https?:\/\/\S+$/.test(storefrontUrl)) throw new UsageError('--storefront-url must be an http(s) URL');
      const input = { name, billingEligible: flag(v, 'billing-eligible'), storefrontUrl: storefrontUrl ?? null, allowDuplicate: flag(v, 'allow-duplicate') };
      ctx.print(await provision.createWorkspace(await ctx.db(), input));
    },
  },
  {
    name: 'workspace list',
    synopsis: '',
    summary: 'list workspaces with their member and product counts',
    options: {},
    async run(ctx) {
      ctx.print(await provision.listWorkspaces(await ctx.db()));
    },
  },
  {
    name: 'workspace portal',
    synopsis: '--workspace <id> [--slug <slug> | --clear-slug] [--enable | --disable]',
    summary: "show or change a workspace's customer portal: its public slug and whether buyers can sign in",
    details:
      'Prints the portal settings with the address to share with buyers (PUBLIC_BASE_URL/portal/<slug or id>). A slug is\n' +
      'lower-case letters, digits and single hyphens, not all digits, at most 63 characters, unique across workspaces.\n' +
      '--disable makes every portal route answer 404 for the workspace (its buyers are signed out until --enable).',
    examples: ['patchbay workspace portal --workspace 1 --slug acme-audio', 'patchbay workspace portal --workspace 1 --disable'],
    options: { workspace: s, slug: s, 'clear-slug': b, enable: b, disable: b },
    async run(ctx, v) {
      const workspaceId = workspaceOf(v);
      const slug = str(v, 'slug');
      if (slug !== undefined && flag(v, 'clear-slug')) throw new UsageError('--slug and --clear-slug exclude each other');
      if (flag(v, 'enable') && flag(v, 'disable')) throw new UsageError('--enable and --disable exclude each other');
      const portal = await import('../modules/customer-portal/index.js');
      if (slug !== undefined && !portal.isSlug(slug)) throw new UsageError(`--slug must be lower-case letters, digits and single hyphens, not all digits (got "${slug}")`);
      const change = {
        ...(slug !== undefined ? { slug } : flag(v, 'clear-slug') ? { slug: null } : {}),
        ...(flag(v, 'enable') ? { enabled: true } : flag(v, 'disable') ? { enabled: false } : {}),
      };
      ctx.print(await provision.customerPortal(await ctx.db(), ctx.config, { workspaceId, change }));
    },
  },
  {
    name: 'account create',
    synopsis: '--email <email> [--verified]',
    summary: 'create an account (an existing address is returned unchanged, "created": false)',
    details: '--verified marks the address as verified. Accounts exist once per e-mail address across workspaces.',
    examples: ['patchbay account create --email owner@acme.example --verified'],
    options: { email: s, verified: b },
    async run(ctx, v) {
      const input = { email: email(required(v, 'email'), 'email'), emailVerified: flag(v, 'verified') };
      ctx.print(await provision.createAccount(await ctx.db(), input));
    },
  },
  {
    name: 'account list',
    synopsis: '[--workspace <id>]',
    summary: 'list team accounts and their memberships (of one workspace with --workspace)',
    options: { workspace: s },
    async run(ctx, v) {
      const workspace = str(v, 'workspace');
      const workspaceId = workspace === undefined ? undefined : id(workspace, 'workspace');
      ctx.print(await provision.listAccounts(await ctx.db(), { workspaceId }));
    },
  },
  {
    name: 'member add',
    synopsis: '--workspace <id> --account <id|email> [--owner] [--permissions <name,…|*>] [--products <all|id,…>]',
    summary: 'make an account a member of a workspace',
    details: `Defaults: an owner gets * and all products; anyone else no permission and no product.\n${MEMBER_DETAILS}`,
    examples: [
      'patchbay member add --workspace 1 --account owner@acme.example --owner',
      'patchbay member add --workspace 1 --account support@acme.example --permissions customers.view,serials.view,serials.manage --products 3,4',
    ],
    options: { workspace: s, account: s, owner: b, permissions: s, products: s },
    async run(ctx, v) {
      const input = {
        workspaceId: workspaceOf(v),
        account: required(v, 'account'),
        owner: flag(v, 'owner'),
        permissions: permissions(str(v, 'permissions')),
        products: products(str(v, 'products')),
      };
      ctx.print(await provision.addMember(await ctx.db(), input));
    },
  },
  {
    name: 'member update',
    synopsis: '--workspace <id> --account <id|email> [--owner | --no-owner] [--permissions <name,…|*>] [--products <all|id,…>]',
    summary: "change a member's owner flag, permissions (replaced) or products (replaced)",
    details: MEMBER_DETAILS,
    examples: ['patchbay member update --workspace 1 --account support@acme.example --permissions customers.view --products all'],
    options: { workspace: s, account: s, owner: b, 'no-owner': b, permissions: s, products: s },
    async run(ctx, v) {
      if (flag(v, 'owner') && flag(v, 'no-owner')) throw new UsageError('--owner and --no-owner exclude each other');
      const change = {
        owner: flag(v, 'owner') ? true : flag(v, 'no-owner') ? false : undefined,
        permissions: permissions(str(v, 'permissions')),
        products: products(str(v, 'products')),
      };
      if (Object.values(change).every((x) => x === undefined)) throw new UsageError('Nothing to change: give --owner, --no-owner, --permissions or --products');
      const input = { workspaceId: workspaceOf(v), account: required(v, 'account'), ...change };
      ctx.print(await provision.updateMember(await ctx.db(), input));
    },
  },
  {
    name: 'member remove',
    synopsis: '--workspace <id> --account <id|email>',
    summary: 'remove a membership (its tokens stop working at once); the last owner stays',
    options: { workspace: s, account: s },
    async run(ctx, v) {
      const input = { workspaceId: workspaceOf(v), account: required(v, 'account') };
      ctx.print(await provision.removeMember(await ctx.db(), input));
    },
  },
  {
    name: 'product create',
    synopsis:
      '--workspace <id> --name <name> [--status <draft|active|archived>] [--max-activations <n>] [--price-cents <n>] [--currency <iso>] [--offline-grace-days <n>] [--storefront-url <url>] [--current-version <v>] [--description <text>]',
    summary: 'create a product; prints it with its productAppId',
    details: async () => `Created as the API creates products (the same checks), with status active unless --status says otherwise
(${(await productSchemas()).PRODUCT_STATUSES.join(', ')}). Defaults: 3 seats, price 0 usd, 14 days offline grace.
productAppId is what a plugin sends to the licensing runtime.`,
    examples: ['patchbay product create --workspace 1 --name "Nebula Synth" --max-activations 3 --price-cents 14900'],
    options: {
      workspace: s, name: s, status: s, 'max-activations': s, 'price-cents': s, currency: s, 'offline-grace-days': s, 'storefront-url': s, 'current-version': s, description: s,
    },
    async run(ctx, v) {
      const workspaceId = workspaceOf(v);
      const body = await checkBody<CreateProductBody>(
        (await productSchemas()).CreateProductBody,
        defined({
          name: required(v, 'name').trim(),
          status: str(v, 'status') ?? 'active',
          maxActivations: optionalInt(v, 'max-activations'),
          priceCents: optionalInt(v, 'price-cents'),
          currency: str(v, 'currency'),
          offlineGraceDays: optionalInt(v, 'offline-grace-days'),
          storefrontUrl: str(v, 'storefront-url'),
          currentVersion: str(v, 'current-version'),
          description: str(v, 'description'),
        }),
      );
      ctx.print(await provision.createProduct(await ctx.db(), workspaceId, body));
    },
  },
  {
    name: 'product list',
    synopsis: '--workspace <id>',
    summary: 'list the products of a workspace with their productAppId',
    options: { workspace: s },
    async run(ctx, v) {
      const workspaceId = workspaceOf(v);
      ctx.print(await provision.listProducts(await ctx.db(), workspaceId));
    },
  },
  {
    name: 'serial generate',
    synopsis:
      '--workspace <id> --product <id> [--quantity <n>] [--prefix <letters>] [--expires-at <iso>] [--active-from <iso>] [--active-to <iso>] [--batch-tag <tag>] [--notes <text>]',
    summary: 'generate available serials for a product',
    details: async () => `The same use case as POST /api/developer/serials/generate: 1–${(await serialSchemas()).MAX_GENERATE_QUANTITY} serials, the product's seat count,
a workspace with billing eligibility (patchbay workspace create --billing-eligible). Dates are ISO 8601 (2027-01-01T00:00:00Z).`,
    examples: ['patchbay serial generate --workspace 1 --product 3 --quantity 10 --prefix NEB'],
    options: {
      workspace: s, product: s, quantity: s, prefix: s, 'expires-at': s, 'active-from': s, 'active-to': s, 'batch-tag': s, notes: s,
    },
    async run(ctx, v) {
      const workspaceId = workspaceOf(v);
      const body = await checkBody<GenerateBody>(
        (await serialSchemas()).GenerateBody,
        defined({
          productId: id(required(v, 'product'), 'product'),
          quantity: optionalInt(v, 'quantity') ?? 1,
          prefix: str(v, 'prefix'),
          expiresAt: str(v, 'expires-at'),
          activeFrom: str(v, 'active-from'),
          activeTo: str(v, 'active-to'),
          batchTag: str(v, 'batch-tag'),
          notes: str(v, 'notes'),
        }),
      );
      ctx.print(await provision.generateSerials(await ctx.db(), workspaceId, body));
    },
  },
  {
    name: 'license-key rotate',
    synopsis: '--workspace <id>',
    summary: "retire the workspace's license signing key and create a new one",
    details:
      'New license tokens are signed with the new key; tokens signed before keep verifying (the retired key stays in the\n' +
      "JWKS). Running servers pick the new key up within 60 s. Run it with the server's LICENSE_KEY_ENCRYPTION_KEY.",
    examples: ['patchbay license-key rotate --workspace 1'],
    options: { workspace: s },
    async run(ctx, v) {
      const workspaceId = workspaceOf(v);
      const { resolveLicenseKeyEncryptionKey } = await import('../runtime.js');
      const encryptionKey = resolveLicenseKeyEncryptionKey(ctx.config);
      ctx.print(await provision.rotateLicenseKey(await ctx.db(), encryptionKey, workspaceId));
    },
  },
  {
    name: 'payouts run',
    synopsis: '[--live]',
    summary: 'transfer payable partner balances to ready payout destinations (the sandbox without --live)',
    details:
      'First takes over what runs that are gone left behind: a reserved transfer whose lease\n' +
      '(PAYOUT_TRANSFER_LEASE_SECONDS, default 300) ran out, one whose outcome was unknown (reconciliation_required) and a\n' +
      'submitted one whose provider confirmation is overdue. For each it asks the provider by the transfer\'s idempotency\n' +
      'key and submits again (with the same key, so nothing is paid twice) only what the provider does not know.\n' +
      'Then reserves every live agreement\'s payable balance of at least PAYOUT_MINIMUM_MINOR_UNITS per currency whose\n' +
      'recipient has a ready destination past its security hold, and submits it to the provider. Prints the run:\n' +
      'submitted, resumed, skipped (with reasons) and how many transfers need reconciliation (patchbay payouts reconcile).\n' +
      'Transfers are marked paid only on the provider\'s word; the sandbox confirms through the job runner of a running\n' +
      'server, or the next run asks it. Without a live provider configured, --live skips every transfer\n' +
      '(provider_not_configured).',
    examples: ['patchbay payouts run', 'patchbay payouts run --live'],
    options: { live: b },
    async run(ctx, v) {
      ctx.print(await provision.runPayouts(await ctx.db(), ctx.config, v.live === true));
    },
  },
  {
    name: 'payouts reconcile',
    synopsis: '[--workspace <id>]  |  --transfer <id> --outcome <paid|returned> --reason <text> [--without-provider]',
    summary: 'list transfers whose outcome is unknown, or settle one as paid or returned to payable',
    details:
      'Without --transfer: prints { "transfers": [...], "truncated" } — every transfer in reconciliation_required (of one\n' +
      'workspace with --workspace), each with its idempotency key and what its provider says now (provider_says: paid,\n' +
      'failed, pending, no_record, unreachable or not_configured; asking never pays).\n' +
      'With --transfer: settles it, with its ledger entry and an audit record (actor operator, --reason), in one\n' +
      'transaction. paid: in flight → paid out. returned: in flight → payable again (the transfer ends failed; a later run\n' +
      'pays the balance anew). The provider is asked first: an outcome against its word is refused, a transfer it still\n' +
      'has pending is left to the next run, and a provider that cannot be asked here (live providers are configured in\n' +
      'the server, not the CLI) is overridden only with --without-provider, after checking with the provider yourself.',
    examples: [
      'patchbay payouts reconcile',
      'patchbay payouts reconcile --transfer 42 --outcome returned --reason "provider support: payout never created"',
    ],
    options: { workspace: s, transfer: s, outcome: s, reason: s, 'without-provider': b },
    async run(ctx, v) {
      const transfer = str(v, 'transfer');
      if (transfer === undefined) {
        const extra = ['outcome', 'reason', 'without-provider'].find((name) => v[name] !== undefined);
        if (extra) throw new UsageError(`--${extra} needs --transfer <id>`);
        const workspace = str(v, 'workspace');
        const workspaceId = workspace === undefined ? undefined : id(workspace, 'workspace');
        ctx.print(await provision.listTransfersToReconcile(await ctx.db(), ctx.config, { workspaceId }));
        return;
      }
      if (v.workspace !== undefined) throw new UsageError('--workspace lists; settling takes --transfer alone');
      const transferId = id(transfer, 'transfer');
      const outcome = required(v, 'outcome');
      if (outcome !== 'paid' && outcome !== 'returned') throw new UsageError(`--outcome must be paid or returned, got "${outcome}"`);
      const reason = required(v, 'reason').trim();
      if ([...reason].length > 500) throw new UsageError('--reason must be at most 500 characters');
      const input = { transferId, outcome, reason, withoutProvider: flag(v, 'without-provider') } as const;
      ctx.print(await provision.reconcileTransfer(await ctx.db(), ctx.config, input));
    },
  },
  {
    name: 'token create',
    synopsis: '--account <id|email> [--workspace <id>] [--ttl <seconds>]  |  --recipient <email>  |  --customer <email> --workspace <slug|id>',
    summary: 'mint an access token (HS256 with JWT_SECRET), a partner portal session with --recipient, or a buyer session with --customer',
    details: async () =>
      `--ttl defaults to 3600 and may be at most ${(await jwtModule()).MAX_TOKEN_LIFETIME_SECONDS} seconds; --workspace may be left out when the account has one\n` +
      'membership. --recipient opens a partner portal session for that address (the operator vouches for it: it counts as\n' +
      'verified) and prints one line: {"token":"…"}. --customer opens a customer portal session (12 hours) for an active\n' +
      'customer of the workspace given by --workspace (its slug or id) and prints one line: {"token":"…"}.',
    examples: ['patchbay token create --account owner@acme.example --workspace 1', 'patchbay token create --customer buyer@example.com --workspace acme-audio', 'export TOKEN=$(npx patchbay token create --account owner@acme.example | jq -r .token)'],
    options: { account: s, workspace: s, ttl: s, recipient: s, customer: s },
    async run(ctx, v) {
      const customer = str(v, 'customer');
      if (customer !== undefined) {
        if (v.account !== undefined || v.recipient !== undefined || v.ttl !== undefined) throw new UsageError('--customer takes --workspace and no other option');
        const workspace = required(v, 'workspace').trim();
        if (!/^[A-Za-z0-9-]{1,63}$/.test(workspace)) throw new UsageError(`--workspace must be a workspace slug or id, got "${workspace}"`);
        const address = email(customer, 'customer');
        ctx.print(await provision.customerSession(await ctx.db(), ctx.config, { workspace, email: address }), true);
        return;
      }
      const recipient = str(v, 'recipient');
      if (recipient !== undefined) {
        if (v.account !== undefined || v.workspace !== undefined || v.ttl !== undefined) throw new UsageError('--recipient takes no other option');
        const address = recipient.trim();
        if (!/^[^\s@]{1,64}@[^\s@]+\.[^\s@]{2,}$/.test(address) || address.length > 254) throw new UsageError(`Not an e-mail address: ${recipient}`);
        const { Recipients } = await import('../modules/recipients/index.js');
        const session = await new Recipients(await ctx.db()).operatorSession(address);
        ctx.print({ token: session.token }, true);
        return;
      }
      const accountRef = str(v, 'account');
      if (!accountRef) throw new UsageError('--account, --recipient or --customer is required');
      if (!ctx.jwt.secret) throw new UsageError('token create needs JWT_SECRET; with JWKS_URL tokens come from your identity provider');
      const ttlText = str(v, 'ttl');
      const ttl = ttlText === undefined ? 3600 : Number(ttlText);
      const { MAX_TOKEN_LIFETIME_SECONDS, signAccessToken } = await jwtModule();
      if (!Number.isInteger(ttl) || ttl < 1 || ttl > MAX_TOKEN_LIFETIME_SECONDS) throw new UsageError(`--ttl must be 1..${MAX_TOKEN_LIFETIME_SECONDS} seconds`);
      const db = await ctx.db();
      const account = await workspaces.findAccount(db, accountRef);
      if (!account) throw new UsageError(`No account ${accountRef}`);
      const memberships = await workspaces.membershipsOf(db, account.id);
      let workspaceId: number;
      const workspace = str(v, 'workspace');
      if (workspace !== undefined) {
        workspaceId = Number(workspace);
        if (!memberships.some((m) => m.workspace_id === workspaceId)) throw new UsageError(`Account ${account.id} is not a member of workspace ${workspace}`);
      } else if (memberships.length === 1) {
        workspaceId = memberships[0]!.workspace_id;
      } else {
        throw new UsageError(`Account ${account.id} has ${memberships.length} memberships; pass --workspace`);
      }
      const token = await signAccessToken(
        { secret: ctx.jwt.secret, issuer: ctx.jwt.issuer, audience: ctx.jwt.audience },
        { accountId: account.id, workspaceId, ttlSeconds: ttl },
      );
      ctx.print({ token, accountId: account.id, workspaceId, expiresIn: ttl });
    },
  },
  {
    name: 'fixtures load',
    synopsis: '<file.json> [--allow-duplicate]',
    summary: 'load a fixture document (README "Fixture format"); prints ids and tokens',
    details:
      'The whole document is one transaction. A workspace whose name another workspace already has (case and surrounding\n' +
      'spaces ignored) is refused, so loading a file twice creates nothing the second time, unless --allow-duplicate.',
    examples: ['patchbay fixtures load fixtures.json'],
    options: { 'allow-duplicate': b },
    positionals: 1,
    async run(ctx, v, positionals) {
      const file = positionals[0];
      if (!file) throw new UsageError('fixtures load needs a file');
      let doc: unknown;
      try {
        doc = JSON.parse(fs.readFileSync(file, 'utf8'));
      } catch (error) {
        throw new UsageError(`Cannot read ${file}: ${(error as Error).message}`);
      }
      const options = { allowDuplicateWorkspaces: flag(v, 'allow-duplicate') };
      ctx.print(await fixtures.loadFixtures(await ctx.db(), ctx.jwt, doc, options));
    },
  },
  {
    name: 'demo seed',
    synopsis: '',
    summary: 'create the demo workspace',
    options: {},
    async run(ctx) {
      ctx.print(await demo.seedDemo(await ctx.db(), ctx.jwt));
    },
  },
];
