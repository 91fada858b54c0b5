// The resellers module's face: the workspace's reseller relationships as serials and purchases
// list and check them. It has no routes of its own.
export { type ResellerRef, visibleResellers, workspaceResellerIds } from './resellers.service.js';
