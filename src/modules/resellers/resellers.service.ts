import type { Scope } from '../../platform/auth/scope.js';
import type { Executor } from '../../platform/db/transaction.js';
import * as repo from './resellers.repo.js';

export type { ResellerRef } from './resellers.repo.js';

export const visibleResellers = (db: Executor, scope: Scope, options: { activeOnly: boolean }) => repo.visibleResellers(db, scope, options);
export const workspaceResellerIds = (db: Executor, scope: Scope) => repo.workspaceResellerIds(db, scope);
