import type { Executor } from '../../platform/db/transaction.js';
import { AppError, CommonErrors, notFound } from '../../platform/http/errors.js';
import { customerPortalUrl } from '../../platform/links/customer-portal-url.js';
import { SLUG_PATTERN } from './customer-portal.schemas.js';
import * as repo from './sessions.repo.js';

// The workspace's side of the portal: the address to share with buyers, its slug and its switch,
// for the developer API, the CLI and fixtures.

// A slug is never all digits, so `/portal/<x>` names a slug or an id, never both.
const SLUG = new RegExp(SLUG_PATTERN);
export const isSlug = (value: string) => value.length <= 63 && SLUG.test(value) && !/^[0-9]+$/.test(value);

export interface PortalSettingsAnswer {
  enabled: boolean;
  slug: string | null;
  url: string;
}

const answer = (publicBaseUrl: string, w: repo.PortalWorkspace): PortalSettingsAnswer => ({
  enabled: w.customer_portal_enabled,
  slug: w.slug,
  url: customerPortalUrl(publicBaseUrl, w),
});

export async function portalSettings(db: Executor, publicBaseUrl: string, workspaceId: number): Promise<PortalSettingsAnswer> {
  const workspace = await repo.workspaceById(db, workspaceId);
  if (!workspace) throw notFound('Workspace');
  return answer(publicBaseUrl, workspace);
}

/** Changes the slug (null removes it) or the switch; a slug another workspace has fails with a unique violation (409 CONFLICT). */
export async function setPortalSettings(db: Executor, workspaceId: number, change: { slug?: string | null; enabled?: boolean }): Promise<repo.PortalWorkspace | undefined> {
  if (change.slug !== undefined && change.slug !== null && !isSlug(change.slug)) {
    throw new AppError(CommonErrors.VALIDATION_FAILED, 'slug must be lower-case letters, digits and single hyphens, not all digits, at most 63 characters', {
      errors: [{ path: 'body/slug', message: 'is not a slug' }],
    });
  }
  return repo.updatePortalSettings(db, workspaceId, change);
}

export async function changePortalSettings(db: Executor, publicBaseUrl: string, workspaceId: number, change: { slug?: string | null; enabled?: boolean }): Promise<PortalSettingsAnswer> {
  const workspace = await setPortalSettings(db, workspaceId, change);
  if (!workspace) throw notFound('Workspace');
  return answer(publicBaseUrl, workspace);
}
