import type { paths } from '../../api/client';

export type Serial = paths['/api/developer/serials']['get']['responses'][200]['content']['application/json']['rows'][number];
export type SerialStatus = Serial['status'];
export type Activation = paths['/api/developer/serials/{serialId}/activations']['get']['responses'][200]['content']['application/json']['rows'][number];
export type SerialEvent = paths['/api/developer/serials/{serialId}/events']['get']['responses'][200]['content']['application/json']['rows'][number];

export const serialKeys = {
  all: ['console', 'serials'] as const,
  one: (serialId: number) => ['console', 'serials', serialId] as const,
};

export type AccessAction = 'activate' | 'reactivate' | 'deactivate' | 'suspend' | 'unsuspend' | 'revoke';

/**
 * The six access actions as the API documents them (the serial lifecycle of the action routes):
 * which statuses each applies to and what it does to the devices. The page offers an action only
 * from those statuses; the API still checks (409 INVALID_SERIAL_TRANSITION).
 */
export const ACCESS_ACTIONS: Array<{ action: AccessAction; label: string; from: SerialStatus[]; devices: 'kept' | 'released'; effect: string }> = [
  { action: 'activate', label: 'Activate', from: ['available'], devices: 'kept', effect: 'Marks the serial as in use.' },
  { action: 'reactivate', label: 'Reactivate', from: ['deactivated'], devices: 'kept', effect: 'Brings a deactivated serial back into use.' },
  { action: 'suspend', label: 'Suspend', from: ['available', 'redeemed'], devices: 'kept', effect: 'Devices keep their seats but fail validation until the serial is unsuspended.' },
  { action: 'unsuspend', label: 'Unsuspend', from: ['suspended'], devices: 'kept', effect: 'Devices validate again.' },
  { action: 'deactivate', label: 'Deactivate', from: ['available', 'redeemed', 'suspended'], devices: 'released', effect: 'Every device loses its seat; the serial can be reactivated later.' },
  { action: 'revoke', label: 'Revoke', from: ['available', 'redeemed', 'suspended', 'deactivated'], devices: 'released', effect: 'Final: every device loses its seat and the serial never works again.' },
];

/** "ABCD-…-WXYZ": enough to recognise a key in a message without spelling it out. */
export const shortCode = (code: string) => (code.length > 12 ? `${code.slice(0, 4)}…${code.slice(-4)}` : code);
