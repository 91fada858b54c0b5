import { Type } from '@sinclair/typebox';
import { PermanentJobError } from '../../platform/jobs/runner.js';
import { customerPortalUrl } from '../../platform/links/customer-portal-url.js';
import { composeEmail } from '../../platform/mail/compose.js';
import { defineEmail, type EmailContext } from '../../platform/mail/mail.js';
import { formatMajorUnits } from '../../platform/money/money.js';
import { Batcher } from '../../platform/db/batcher.js';
import { itemsForEmail } from './purchase-emails.repo.js';

const ItemRef = Type.Object({ orderItemId: Type.Integer({ minimum: 1 }) }, { additionalProperties: false });

/**
 * Reads of e-mails that are rendered at the same time go together (one statement for the receipts of a burst of
 * sales instead of one each), per database handle: a test process serves many.
 */
const readers = new WeakMap<object, Batcher<{ workspaceId: number; orderItemId: number }, Awaited<ReturnType<typeof itemsForEmail>>[number]>>();

function readItem(db: EmailContext['db'], workspaceId: number, orderItemId: number) {
  let reader = readers.get(db);
  if (!reader) {
    reader = new Batcher((keys) => itemsForEmail(db, keys), 200);
    readers.set(db, reader);
  }
  return reader.add({ workspaceId, orderItemId });
}

async function itemOf(ctx: EmailContext, orderItemId: number) {
  if (ctx.workspaceId === null) throw new PermanentJobError('a purchase e-mail belongs to a workspace');
  const item = await readItem(ctx.db, ctx.workspaceId, orderItemId);
  if (!item) return { skip: 'the order item is gone' } as const;
  if (item.customerStatus !== 'active') return { skip: 'the customer was removed' } as const;
  return item;
}

type Item = Exclude<Awaited<ReturnType<typeof itemOf>>, { skip: string }>;

/** Where the key, the downloads and the devices are: the buyer's portal, when the workspace has it on. */
function portalParts(ctx: EmailContext, item: Item) {
  if (!item.portalEnabled) return { paragraphs: [], action: undefined };
  const url = customerPortalUrl(ctx.urls.publicBaseUrl, { id: ctx.workspaceId!, slug: item.workspaceSlug });
  return {
    paragraphs: [`Your license key, downloads and devices are in your ${item.workspaceName} account: sign in with this e-mail address, no password needed.`],
    action: { label: 'Open your purchases', url },
  };
}

const serialDetails = (code: string | null) => (code ? [{ label: 'Your serial', value: code }] : []);

/** The receipt of a sale recorded by the managed checkout (one per product). */
export const PRODUCT_PURCHASE_EMAIL = defineEmail({
  name: 'product_purchase',
  payload: ItemRef,
  async render({ orderItemId }, ctx) {
    const item = await itemOf(ctx, orderItemId);
    if ('skip' in item) return item;
    const currency = item.currency.trim();
    const portal = portalParts(ctx, item);
    return composeEmail({
      to: item.email,
      subject: `Your purchase of ${item.productName}`,
      brand: item.workspaceName,
      preview: `Thank you for buying ${item.productName} from ${item.workspaceName}.`,
      heading: `Thank you for buying ${item.productName}`,
      paragraphs: [`Thank you for buying ${item.productName} (${formatMajorUnits(item.sale_price_cents, currency)} ${currency.toUpperCase()}) from ${item.workspaceName}.`, ...portal.paragraphs],
      details: serialDetails(item.serialCode),
      ...(portal.action ? { action: portal.action } : {}),
      footer: [`${item.workspaceName} sent you this receipt because you bought ${item.productName}.`],
    });
  },
});

/** Access granted without payment (`sendProductPurchaseEmails` on a manual grant). */
export const PRODUCT_GRANT_EMAIL = defineEmail({
  name: 'product_grant',
  payload: ItemRef,
  async render({ orderItemId }, ctx) {
    const item = await itemOf(ctx, orderItemId);
    if ('skip' in item) return item;
    const until = item.accessKind === 'subscription' && item.accessEndsAt ? new Date(item.accessEndsAt).toISOString().slice(0, 10) : null;
    const portal = portalParts(ctx, item);
    return composeEmail({
      to: item.email,
      subject: `Your access to ${item.productName}`,
      brand: item.workspaceName,
      preview: `${item.workspaceName} gave you access to ${item.productName}.`,
      heading: `You now have access to ${item.productName}`,
      paragraphs: [
        `${item.workspaceName} gave you access to ${item.productName}.`,
        ...(until ? [`Access runs until ${until}.`] : []),
        'No payment was taken for this access.',
        ...portal.paragraphs,
      ],
      details: serialDetails(item.serialCode),
      ...(portal.action ? { action: portal.action } : {}),
      footer: [`${item.workspaceName} sent you this e-mail because they gave you access to ${item.productName}.`],
    });
  },
});
