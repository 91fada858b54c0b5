import { operatorScope } from '../platform/auth/scope.js';
import type { Db } from '../platform/db/database.js';
import { type Executor, inTransaction } from '../platform/db/transaction.js';
import * as workspaces from '../modules/workspaces/index.js';
import type { CreateProductBody } from '../modules/products/index.js';
import type { GenerateBody } from '../modules/serials/index.js';

// Operator use cases behind the `patchbay` CLI. They act with an operator scope (never reachable
// from HTTP) and reuse the API's use cases wherever one exists, so a product or a serial made
// here is made exactly as the API makes it.
//
// Only the workspaces module loads with this file: the workspace, account and member commands need nothing else,
// and a CLI command's time is mostly its start-up (docs/performance.md, "Start-up"). The other modules load when a
// command that uses them runs.
const productsModule = () => import('../modules/products/index.js');
const serialsModule = () => import('../modules/serials/index.js');
const licensingModule = () => import('../modules/licensing/index.js');
const ledgerModule = () => import('../modules/ledger/index.js');
const payoutsModule = () => import('../modules/payouts/index.js');

/** A refusal the operator can act on: printed as one line on stderr, exit 1. */
export class OperatorError extends Error {}

/**
 * Refuses names that an existing workspace already uses (case and surrounding spaces ignored), or
 * that repeat within `names`. Loading a fixture twice once created a second "Acme Audio", after
 * which tokens could no longer pick a workspace by membership. Call inside a transaction: the
 * lock keeps the check true until it commits.
 */
export async function refuseDuplicateWorkspaceNames(tx: Executor, names: string[]): Promise<void> {
  if (names.length === 0) return;
  await workspaces.lockWorkspaceNames(tx);
  const seen = new Set<string>();
  for (const name of names) {
    const key = name.trim().toLowerCase();
    if (seen.has(key)) throw new OperatorError(`The workspace name "${name}" appears twice; pass --allow-duplicate to create both`);
    seen.add(key);
  }
  const existing = await workspaces.workspacesNamed(tx, names);
  if (existing.length > 0) {
    const list = existing.map((w) => `"${w.name}" (id ${w.id})`).join(', ');
    throw new OperatorError(`A workspace with this name already exists: ${list}. Pass --allow-duplicate to create another one anyway`);
  }
}

const workspaceRow = (w: { id: number; name: string; billing_eligible: boolean; storefront_url: string | null; created_at: Date }) => ({
  id: w.id,
  name: w.name,
  billingEligible: w.billing_eligible,
  storefrontUrl: w.storefront_url,
  createdAt: w.created_at.toISOString(),
});

export async function requireWorkspace(db: Executor, workspaceId: number) {
  const workspace = await workspaces.findWorkspace(db, workspaceId);
  if (!workspace) throw new OperatorError(`No workspace ${workspaceId}`);
  return workspace;
}

export async function createWorkspace(db: Db, input: { name: string; billingEligible: boolean; storefrontUrl: string | null; allowDuplicate: boolean }) {
  return inTransaction(db, async (tx) => {
    if (!input.allowDuplicate) await refuseDuplicateWorkspaceNames(tx, [input.name]);
    const id = await workspaces.createWorkspace(tx, { name: input.name.trim(), billingEligible: input.billingEligible, storefrontUrl: input.storefrontUrl });
    return workspaceRow((await workspaces.findWorkspace(tx, id))!);
  });
}

export async function listWorkspaces(db: Db) {
  const rows = await workspaces.listWorkspaces(db);
  return { workspaces: rows.map((w) => ({ ...workspaceRow(w), members: w.members ?? 0, products: w.products ?? 0 })) };
}

export async function createAccount(db: Db, input: { email: string; emailVerified: boolean }) {
  const account = await workspaces.createAccount(db, input);
  return { id: account.id, email: account.email, emailVerified: account.email_verified, created: account.created };
}

const memberRow = (m: workspaces.MemberRecord) => ({
  workspaceId: m.workspace_id,
  accountId: m.account_id,
  email: m.email,
  owner: m.owner,
  permissions: m.permissions,
  // An owner reaches every product whatever the assignment says (see createScope).
  products: m.owner || m.all_products ? ('all' as const) : m.product_ids,
});

/** Team accounts (with their memberships); customers who are members of nothing are not listed. */
export async function listAccounts(db: Db, filter: { workspaceId?: number | undefined }) {
  if (filter.workspaceId !== undefined) await requireWorkspace(db, filter.workspaceId);
  const members = await workspaces.listMembers(db, filter);
  const byAccount = new Map<number, { id: number; email: string; memberships: Array<Omit<ReturnType<typeof memberRow>, 'accountId' | 'email'>> }>();
  for (const m of members) {
    const entry = byAccount.get(m.account_id) ?? { id: m.account_id, email: m.email, memberships: [] };
    const { accountId: _a, email: _e, ...membership } = memberRow(m);
    entry.memberships.push(membership);
    byAccount.set(m.account_id, entry);
  }
  return { accounts: [...byAccount.values()] };
}

async function requireAccount(db: Executor, idOrEmail: string) {
  const account = await workspaces.findAccount(db, idOrEmail);
  if (!account) throw new OperatorError(`No account ${idOrEmail}; create it with: patchbay account create --email <address>`);
  return account;
}

async function checkProducts(db: Executor, workspaceId: number, products: number[] | 'all' | undefined) {
  if (products === undefined || products === 'all') return;
  const found = new Set(await workspaces.productsOfWorkspace(db, workspaceId, products));
  const missing = products.filter((id) => !found.has(id));
  if (missing.length > 0) throw new OperatorError(`Not a product of workspace ${workspaceId}: ${missing.join(', ')}`);
}

export interface MemberInput {
  workspaceId: number;
  account: string;
  owner?: boolean | undefined;
  permissions?: string[] | undefined;
  products?: number[] | 'all' | undefined;
}

export async function addMember(db: Db, input: MemberInput) {
  return inTransaction(db, async (tx) => {
    await requireWorkspace(tx, input.workspaceId);
    const account = await requireAccount(tx, input.account);
    if (await workspaces.findMember(tx, input.workspaceId, account.id)) {
      throw new OperatorError(`Account ${account.id} is already a member of workspace ${input.workspaceId}; change it with: patchbay member update`);
    }
    await checkProducts(tx, input.workspaceId, input.products);
    const owner = input.owner ?? false;
    await workspaces.addMembership(tx, {
      workspaceId: input.workspaceId,
      accountId: account.id,
      owner,
      // The same defaults as fixtures: an owner holds everything, anyone else only what is given.
      permissions: input.permissions ?? (owner ? ['*'] : []),
      productIds: input.products ?? (owner ? 'all' : []),
    });
    return memberRow((await workspaces.findMember(tx, input.workspaceId, account.id))!);
  });
}

/** A workspace must keep an owner: live partner consent and the owner's all-access depend on one. */
async function refuseLastOwner(tx: Executor, workspaceId: number, accountId: number) {
  if ((await workspaces.countOwners(tx, workspaceId)) <= 1) {
    throw new OperatorError(`Account ${accountId} is the only owner of workspace ${workspaceId}; make another member owner first`);
  }
}

export async function updateMember(db: Db, input: MemberInput) {
  return inTransaction(db, async (tx) => {
    await requireWorkspace(tx, input.workspaceId);
    const account = await requireAccount(tx, input.account);
    await workspaces.lockMemberships(tx, input.workspaceId);
    const before = await workspaces.findMember(tx, input.workspaceId, account.id);
    if (!before) throw new OperatorError(`Account ${account.id} is not a member of workspace ${input.workspaceId}; add it with: patchbay member add`);
    if (before.owner && input.owner === false) await refuseLastOwner(tx, input.workspaceId, account.id);
    await checkProducts(tx, input.workspaceId, input.products);
    await workspaces.updateMembership(tx, {
      workspaceId: input.workspaceId,
      accountId: account.id,
      owner: input.owner,
      permissions: input.permissions,
      productIds: input.products,
    });
    return memberRow((await workspaces.findMember(tx, input.workspaceId, account.id))!);
  });
}

export async function removeMember(db: Db, input: { workspaceId: number; account: string }) {
  return inTransaction(db, async (tx) => {
    await requireWorkspace(tx, input.workspaceId);
    const account = await requireAccount(tx, input.account);
    await workspaces.lockMemberships(tx, input.workspaceId);
    const before = await workspaces.findMember(tx, input.workspaceId, account.id);
    if (!before) throw new OperatorError(`Account ${account.id} is not a member of workspace ${input.workspaceId}`);
    if (before.owner) await refuseLastOwner(tx, input.workspaceId, account.id);
    await workspaces.removeMembership(tx, input.workspaceId, account.id);
    // Tokens already issued stop working at once: every request looks the membership up.
    return { removed: true, workspaceId: input.workspaceId, accountId: account.id, email: account.email };
  });
}

export async function createProduct(db: Db, workspaceId: number, body: CreateProductBody) {
  const [{ createProduct: createProductUseCase, toProductRow }] = await Promise.all([productsModule(), requireWorkspace(db, workspaceId)]);
  const row = toProductRow(await createProductUseCase(db, operatorScope(workspaceId, 0), body));
  return { ...row, productAppId: row.appId };
}

export async function listProducts(db: Db, workspaceId: number) {
  const [{ listProducts: listProductsUseCase }] = await Promise.all([productsModule(), requireWorkspace(db, workspaceId)]);
  const scope = operatorScope(workspaceId, 0);
  const products = [];
  for (let page = 1; ; page++) {
    const list = await listProductsUseCase(db, scope, { page, limit: 500 });
    products.push(...list.rows.map((row) => ({ ...row, productAppId: row.appId })));
    if (products.length >= list.total || list.rows.length === 0) break;
  }
  return { products };
}

export async function generateSerials(db: Db, workspaceId: number, body: GenerateBody) {
  const [{ generateSerials: generateSerialsUseCase }] = await Promise.all([serialsModule(), requireWorkspace(db, workspaceId)]);
  return generateSerialsUseCase(db, operatorScope(workspaceId, 0), body);
}

/**
 * Retires the workspace's license signing key and creates a new one. The current key is opened
 * first: a CLI run with another LICENSE_KEY_ENCRYPTION_KEY than the server's would otherwise seal
 * a key the server cannot open, and every activation would fail.
 */
export async function rotateLicenseKey(db: Db, encryptionKey: Buffer, workspaceId: number) {
  const [{ LicenseKeyring }] = await Promise.all([licensingModule(), requireWorkspace(db, workspaceId)]);
  const keyring = new LicenseKeyring(db, encryptionKey);
  let previousKid: string;
  try {
    previousKid = (await keyring.signingKey(workspaceId)).kid;
  } catch {
    throw new OperatorError(
      `The license signing key of workspace ${workspaceId} cannot be opened with this LICENSE_KEY_ENCRYPTION_KEY; run the command with the server's key`,
    );
  }
  const kid = await keyring.rotate(workspaceId);
  const published = await keyring.publicKeys(workspaceId);
  return { workspaceId, previousKid, kid, publishedKids: published.map((k) => k.kid) };
}

export interface PayoutSettings {
  publicBaseUrl: string;
  payouts: { minimumMinorUnits: number; transferLeaseSeconds?: number | undefined };
}

/**
 * The payout side of the CLI, with the built-in sandbox providers. Live providers are configured in
 * code (buildApp's `payouts.providers`), so here a live transfer's provider is "not configured":
 * a `--live` run skips, and reconciling a live transfer needs --without-provider.
 */
async function payouts(db: Db, settings: PayoutSettings) {
  const [{ Reconciliation, Transfers }, { createPayouts }] = await Promise.all([ledgerModule(), payoutsModule()]);
  const { providers } = createPayouts(db, { publicBaseUrl: settings.publicBaseUrl });
  return {
    transfers: new Transfers(db, providers, BigInt(settings.payouts.minimumMinorUnits), { leaseSeconds: settings.payouts.transferLeaseSeconds }),
    reconciliation: new Reconciliation(db, providers),
  };
}

export const runPayouts = async (db: Db, settings: PayoutSettings, livemode: boolean) => (await payouts(db, settings)).transfers.run(livemode);

export async function listTransfersToReconcile(db: Db, settings: PayoutSettings, filter: { workspaceId?: number | undefined }) {
  if (filter.workspaceId !== undefined) await requireWorkspace(db, filter.workspaceId);
  return (await payouts(db, settings)).reconciliation.list(filter);
}

export async function reconcileTransfer(db: Db, settings: PayoutSettings, input: { transferId: number; outcome: 'paid' | 'returned'; reason: string; withoutProvider: boolean }) {
  const [{ reconciliation }, { ReconcileRefused }] = await Promise.all([payouts(db, settings), ledgerModule()]);
  try {
    return await reconciliation.settle(input);
  } catch (error) {
    throw error instanceof ReconcileRefused ? new OperatorError(error.message) : error;
  }
}

/**
 * What a server on an empty PostgreSQL database prints (on stderr): the exact commands that
 * provision a first workspace, its owner and a token, ready to paste.
 */
export function firstStepsHint(address: string, options: { tokensFromJwks: boolean }): string {
  return [
    'No workspace yet. Provision the first one with the CLI, run with the same DATABASE_URL, JWT_SECRET and',
    'LICENSE_KEY_ENCRYPTION_KEY as this server (jq picks the ids out of its JSON output):',
    '  WS=$(npx patchbay workspace create --name "My Studio" --billing-eligible | jq -r .id)',
    '  npx patchbay account create --email owner@example.com --verified',
    '  npx patchbay member add --workspace "$WS" --account owner@example.com --owner',
    options.tokensFromJwks
      ? '  (tokens come from your identity provider: JWKS_URL is set)'
      : '  export TOKEN=$(npx patchbay token create --account owner@example.com --workspace "$WS" | jq -r .token)',
    `  curl -H "Authorization: Bearer $TOKEN" ${address}/api/developer/customers`,
    'Then add products and serials: npx patchbay product create --help, npx patchbay serial generate --help.',
  ].join('\n');
}

// The buyers' portal: loaded when one of these runs (the module brings the portal's routes along).
const customerPortalModule = () => import('../modules/customer-portal/index.js');

/** A buyer session for an active customer of the workspace (slug or id), as `token create --customer` prints it. */
export async function customerSession(db: Db, settings: { publicBaseUrl: string }, input: { workspace: string; email: string }): Promise<{ token: string }> {
  const { CustomerSessions } = await customerPortalModule();
  const session = await new CustomerSessions(db, settings.publicBaseUrl).operatorSession(input.workspace, input.email);
  if (!session) throw new OperatorError(`No active customer ${input.email} in workspace ${input.workspace}, or no such workspace`);
  return { token: session.token };
}

/** Shows or changes a workspace's customer portal (slug, switch); prints the address to share. */
export async function customerPortal(db: Db, settings: { publicBaseUrl: string }, input: { workspaceId: number; change: { slug?: string | null; enabled?: boolean } }) {
  const { changePortalSettings } = await customerPortalModule();
  await requireWorkspace(db, input.workspaceId);
  try {
    return { workspaceId: input.workspaceId, ...(await changePortalSettings(db, settings.publicBaseUrl, input.workspaceId, input.change))! };
  } catch (error) {
    // The unique slug: another workspace has it.
    if ((error as { code?: unknown }).code === '23505') throw new OperatorError(`The slug "${input.change.slug}" belongs to another workspace`);
    throw error;
  }
}
