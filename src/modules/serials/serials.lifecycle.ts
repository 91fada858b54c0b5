import type { SerialStatus } from '../../platform/db/schema.js';

/**
 * Serial lifecycle. `available` is unassigned inventory; `redeemed` is in use
 * (assigned to a customer or activated on a machine). Every action's allowed
 * starting states and result:
 *
 * | action     | from                                        | to                     | devices            |
 * |------------|---------------------------------------------|------------------------|--------------------|
 * | activate   | available                                   | redeemed               | kept               |
 * | suspend    | available, redeemed                         | suspended              | kept; validation fails SUSPENDED |
 * | unsuspend  | suspended                                   | redeemed or available* | kept               |
 * | deactivate | available, redeemed, suspended              | deactivated            | released           |
 * | reactivate | deactivated                                 | redeemed or available* | none to restore    |
 * | revoke     | available, redeemed, suspended, deactivated | revoked (terminal)     | released           |
 *
 * (*) redeemed if the serial was ever redeemed or has a customer, else available.
 */
export const SERIAL_ACTIONS = ['activate', 'reactivate', 'deactivate', 'suspend', 'unsuspend', 'revoke'] as const;
export type SerialAction = (typeof SERIAL_ACTIONS)[number];

interface Rule {
  from: readonly SerialStatus[];
  to: SerialStatus | 'in-use';
  releasesDevices: boolean;
}

const RULES: Record<SerialAction, Rule> = {
  activate: { from: ['available'], to: 'redeemed', releasesDevices: false },
  suspend: { from: ['available', 'redeemed'], to: 'suspended', releasesDevices: false },
  unsuspend: { from: ['suspended'], to: 'in-use', releasesDevices: false },
  deactivate: { from: ['available', 'redeemed', 'suspended'], to: 'deactivated', releasesDevices: true },
  reactivate: { from: ['deactivated'], to: 'in-use', releasesDevices: false },
  revoke: { from: ['available', 'redeemed', 'suspended', 'deactivated'], to: 'revoked', releasesDevices: true },
};

export interface SerialFacts {
  status: SerialStatus;
  redeemedAt: Date | null;
  customerId: number | null;
}

export type TransitionResult =
  | { ok: true; to: SerialStatus; releasesDevices: boolean; redeems: boolean }
  | { ok: false; allowedActions: SerialAction[] };

export function allowedActions(status: SerialStatus): SerialAction[] {
  return SERIAL_ACTIONS.filter((action) => RULES[action].from.includes(status));
}

export function transition(serial: SerialFacts, action: SerialAction): TransitionResult {
  const rule = RULES[action];
  if (!rule.from.includes(serial.status)) return { ok: false, allowedActions: allowedActions(serial.status) };
  const inUse: SerialStatus = serial.redeemedAt || serial.customerId !== null ? 'redeemed' : 'available';
  const to = rule.to === 'in-use' ? inUse : rule.to;
  return { ok: true, to, releasesDevices: rule.releasesDevices, redeems: to === 'redeemed' && serial.redeemedAt === null };
}

/** Seats left for new machines; none while the serial cannot be used. */
export function remainingActivations(status: SerialStatus, max: number, active: number): number {
  return status === 'available' || status === 'redeemed' ? Math.max(0, max - active) : 0;
}

/** The lifecycle as a Markdown table, for the OpenAPI descriptions of the action routes. */
export const LIFECYCLE_TABLE = [
  '| action | allowed from | result | devices |',
  '|---|---|---|---|',
  ...SERIAL_ACTIONS.map((action) => {
    const rule = RULES[action];
    const to = rule.to === 'in-use' ? 'redeemed (available if never redeemed)' : rule.to;
    const devices = rule.releasesDevices ? 'released' : 'kept';
    return `| ${action} | ${rule.from.join(', ')} | ${to}${action === 'revoke' ? ' (terminal)' : ''} | ${devices} |`;
  }),
].join('\n');
