import fs from 'node:fs';
import type { Config } from '../config.js';
import { MAX_TOKEN_LIFETIME_SECONDS, signAccessToken, type JwtSettings } from '../platform/auth/jwt.js';
import { PERMISSIONS } from '../platform/auth/permissions.js';
import { type Database, migrate, openDatabase } from '../platform/db/database.js';
import { findAccount, membershipsOf } from '../modules/workspaces/workspaces.repo.js';
import { Recipients } from '../modules/recipients/recipients.service.js';
import { Transfers } from '../modules/ledger/transfers.service.js';
import { payoutProviders, SandboxCardProvider, SandboxWalletProvider } from '../modules/payouts/sandbox-provider.js';
import { CreateProductBody, PRODUCT_STATUSES } from '../modules/products/products.schemas.js';
import { GenerateBody, MAX_GENERATE_QUANTITY } from '../modules/serials/serials.schemas.js';
import { seedDemo } from '../operator/demo.js';
import { loadFixtures } from '../operator/fixtures.js';
import * as provision from '../operator/provision.js';
import { resolveLicenseKeyEncryptionKey } from '../runtime.js';
import { checkBody, defined, email, flag, id, optionalInt, type OptionSpec, type OptionValues, permissions, products, required, str, UsageError } from './args.js';

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
  /** More help, shown by `--help`. */
  details?: string;
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
    details: `Created as the API creates products (the same checks), with status active unless --status says otherwise
(${PRODUCT_STATUSES.join(', ')}). Defaults: 3 seats, price 0 usd, 14 days offline grace.
productAppId is what a plugin sends to the licensing runtime.`,
    examples: ['patchbay product create --workspace 1 --name "Nebula Synth" --max-activations 3 --price-cents 14900'],
    options: {
      workspace: s, name: s, status: s, 'max-activations': s, 'price-cents': s, currency: s, 'offline-grace-days': s, 'storefront-url': s, 'current-version': s, description: s,
    },
    async run(ctx, v) {
      const workspaceId = workspaceOf(v);
      const body = checkBody<CreateProductBody>(
        CreateProductBody,
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
    details: `The same use case as POST /api/developer/serials/generate: 1–${MAX_GENERATE_QUANTITY} serials, the product's seat count,
a workspace with billing eligibility (patchbay workspace create --billing-eligible). Dates are ISO 8601 (2027-01-01T00:00:00Z).`,
    examples: ['patchbay serial generate --workspace 1 --product 3 --quantity 10 --prefix NEB'],
    options: {
      workspace: s, product: s, quantity: s, prefix: s, 'expires-at': s, 'active-from': s, 'active-to': s, 'batch-tag': s, notes: s,
    },
    async run(ctx, v) {
      const workspaceId = workspaceOf(v);
      const body = checkBody<GenerateBody>(
        GenerateBody,
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
      const encryptionKey = resolveLicenseKeyEncryptionKey(ctx.config);
      ctx.print(await provision.rotateLicenseKey(await ctx.db(), encryptionKey, workspaceId));
    },
  },
  {
    name: 'payouts run',
    synopsis: '[--live]',
    summary: 'transfer payable partner balances to ready payout destinations (the sandbox without --live)',
    details:
      'Reserves every live agreement\'s payable balance of at least PAYOUT_MINIMUM_MINOR_UNITS per currency whose recipient\n' +
      'has a ready destination past its security hold, and submits it to the provider. Prints the run: submitted, skipped\n' +
      '(with reasons) and transfers whose outcome needs reconciliation. Transfers are marked paid only when the provider\n' +
      'confirms; the sandbox confirms through the job runner of a running server. Without a live provider configured,\n' +
      '--live skips every transfer (provider_not_configured).',
    examples: ['patchbay payouts run', 'patchbay payouts run --live'],
    options: { live: b },
    async run(ctx, v) {
      const livemode = v.live === true;
      const sandboxCard = new SandboxCardProvider(ctx.config.publicBaseUrl);
      const transfers = new Transfers(await ctx.db(), payoutProviders({ card: sandboxCard, wallet: new SandboxWalletProvider() }), BigInt(ctx.config.payouts.minimumMinorUnits));
      ctx.print(await transfers.run(livemode));
    },
  },
  {
    name: 'token create',
    synopsis: '--account <id|email> [--workspace <id>] [--ttl <seconds>]  |  --recipient <email>',
    summary: 'mint an access token (HS256 with JWT_SECRET), or a partner portal session with --recipient',
    details:
      `--ttl defaults to 3600 and may be at most ${MAX_TOKEN_LIFETIME_SECONDS} seconds; --workspace may be left out when the account has one\n` +
      'membership. --recipient opens a partner portal session for that address (the operator vouches for it: it counts as\n' +
      'verified) and prints one line: {"token":"…"}.',
    examples: ['patchbay token create --account owner@acme.example --workspace 1', 'export TOKEN=$(npx patchbay token create --account owner@acme.example | jq -r .token)'],
    options: { account: s, workspace: s, ttl: s, recipient: s },
    async run(ctx, v) {
      const recipient = str(v, 'recipient');
      if (recipient !== undefined) {
        if (v.account !== undefined || v.workspace !== undefined || v.ttl !== undefined) throw new UsageError('--recipient takes no other option');
        const address = recipient.trim();
        if (!/^[^\s@]{1,64}@[^\s@]+\.[^\s@]{2,}$/.test(address) || address.length > 254) throw new UsageError(`Not an e-mail address: ${recipient}`);
        const session = await new Recipients(await ctx.db(), '').operatorSession(address);
        ctx.print({ token: session.token }, true);
        return;
      }
      const accountRef = str(v, 'account');
      if (!accountRef) throw new UsageError('--account or --recipient is required');
      if (!ctx.jwt.secret) throw new UsageError('token create needs JWT_SECRET; with JWKS_URL tokens come from your identity provider');
      const ttlText = str(v, 'ttl');
      const ttl = ttlText === undefined ? 3600 : Number(ttlText);
      if (!Number.isInteger(ttl) || ttl < 1 || ttl > MAX_TOKEN_LIFETIME_SECONDS) throw new UsageError(`--ttl must be 1..${MAX_TOKEN_LIFETIME_SECONDS} seconds`);
      const db = await ctx.db();
      const account = await findAccount(db, accountRef);
      if (!account) throw new UsageError(`No account ${accountRef}`);
      const memberships = await membershipsOf(db, account.id);
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
      ctx.print(await loadFixtures(await ctx.db(), ctx.jwt, doc, options));
    },
  },
  {
    name: 'demo seed',
    synopsis: '',
    summary: 'create the demo workspace',
    options: {},
    async run(ctx) {
      ctx.print(await seedDemo(await ctx.db(), ctx.jwt));
    },
  },
];
