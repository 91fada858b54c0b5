import fs from 'node:fs';
import { fileURLToPath } from 'node:url';
import { formatMajorUnits } from '../../platform/money/money.js';
import { type Archive, buildArchive } from './package-archive.js';

/**
 * The storefront integration package: the workspace's active products with their prices and
 * storefront destinations, for an in-plugin store panel. It carries no credential and does not
 * license anything (that is the plugin package's job).
 */

const TEMPLATE_DIR = new URL('./templates/storefront/', import.meta.url);
const template = (name: string) => fs.readFileSync(fileURLToPath(new URL(name, TEMPLATE_DIR)), 'utf8');

export interface StorefrontInput {
  products: Array<{ id: number; name: string; app_id: string; price_cents: number; currency: string; storefront_url: string | null }>;
  workspaceStorefrontUrl: string;
  uiWidth: number;
  uiHeight: number;
}

export function buildStorefrontArchive(input: StorefrontInput): Archive {
  const catalogue = {
    uiWidth: input.uiWidth,
    uiHeight: input.uiHeight,
    storefrontUrl: input.workspaceStorefrontUrl,
    products: input.products.map((p) => ({
      id: p.id,
      name: p.name,
      appId: p.app_id,
      priceCents: p.price_cents,
      price: formatMajorUnits(p.price_cents, p.currency.trim()),
      currency: p.currency.trim(),
      storefrontUrl: p.storefront_url ?? input.workspaceStorefrontUrl,
    })),
  };
  const fill = (text: string) => text.replaceAll('{{json catalogue}}', JSON.stringify(catalogue, null, 2)).replaceAll('{{uiWidth}}', String(input.uiWidth)).replaceAll('{{uiHeight}}', String(input.uiHeight));
  const files = [
    { path: 'README.md', content: Buffer.from(fill(template('README.md')), 'utf8') },
    { path: 'Scripts/PatchbayStorefront.js', content: Buffer.from(fill(template('PatchbayStorefront.js')), 'utf8') },
    { path: 'storefront.json', content: Buffer.from(`${JSON.stringify(catalogue, null, 2)}\n`, 'utf8') },
  ];
  return buildArchive('patchbay-storefront', files, {
    packageFormat: 1,
    templateVersion: 'storefront-1',
    variant: 'storefront',
    product: { id: 0, name: '', appId: '', environment: '' },
    settings: { uiWidth: input.uiWidth, uiHeight: input.uiHeight },
    licensing: { baseUrl: '', offlineGraceDays: 0, keyIds: [] },
  });
}
