import { writeAudit } from '../../platform/audit/audit.repo.js';
import { hasPermission, type Scope } from '../../platform/auth/scope.js';
import type { Db } from '../../platform/db/database.js';
import { inTransaction } from '../../platform/db/transaction.js';
import { forbidden } from '../../platform/http/errors.js';
import { customerPortalUrl } from '../../platform/links/customer-portal-url.js';
import * as repo from './settings.repo.js';

export type SettingsChange = { name?: string; storefront_url?: string | null; partner_programs_enabled?: boolean; keep_serials_on_refund?: boolean };

/** The settings as the API shows them, with the buyers' portal address to share. */
const answer = ({ slug, customer_portal_enabled, ...row }: Awaited<ReturnType<typeof repo.settingsOf>>, publicBaseUrl: string) => ({
  ...row,
  customer_portal_enabled,
  customer_portal_url: customerPortalUrl(publicBaseUrl, { id: row.id, slug }),
});

export const readSettings = async (db: Db, scope: Scope, publicBaseUrl: string) => answer(await repo.settingsOf(db, scope), publicBaseUrl);

/** Changes what is sent; turning partner programs on or off also needs `partners.manage`. Audited with what changed. */
export async function changeSettings(db: Db, scope: Scope, change: SettingsChange, publicBaseUrl: string) {
  if (change.partner_programs_enabled !== undefined && !hasPermission(scope, 'partners.manage')) throw forbidden('partners.manage');
  return inTransaction(db, async (tx) => {
    const before = await repo.settingsOf(tx, scope, true);
    await repo.updateSettings(tx, scope, change);
    const after = await repo.settingsOf(tx, scope);
    const changed = (Object.keys(change) as Array<keyof SettingsChange>).filter((key) => before[key] !== after[key]);
    if (changed.length > 0) {
      await writeAudit(tx, scope, {
        action: 'workspace.settings_changed',
        subjectType: 'workspace',
        subjectId: scope.workspaceId,
        data: { before: Object.fromEntries(changed.map((k) => [k, before[k]])), after: Object.fromEntries(changed.map((k) => [k, after[k]])) },
      });
    }
    return answer(after, publicBaseUrl);
  });
}
