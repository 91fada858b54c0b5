/**
 * Where a workspace's buyers' portal lives: `PUBLIC_BASE_URL/portal/<slug>` (or the workspace id
 * while it has no slug). The portal's API accepts either in a sign-in request, so a link made
 * before a slug was set keeps working.
 */
export function customerPortalUrl(publicBaseUrl: string, workspace: { id: number; slug: string | null }): string {
  return `${publicBaseUrl.replace(/\/$/, '')}/portal/${encodeURIComponent(workspace.slug ?? String(workspace.id))}`;
}
