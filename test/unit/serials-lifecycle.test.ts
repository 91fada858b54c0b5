import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { SerialStatus } from '../../src/platform/db/schema.js';
import { allowedActions, remainingActivations, SERIAL_ACTIONS, transition, type SerialAction } from '../../src/modules/serials/serials.lifecycle.js';

const STATES: SerialStatus[] = ['available', 'redeemed', 'suspended', 'deactivated', 'revoked'];
const fresh = { redeemedAt: null, customerId: null };
const sold = { redeemedAt: new Date('2026-01-01T00:00:00Z'), customerId: 7 };

type Outcome = { to: SerialStatus; releasesDevices: boolean } | 'refused';

/**
 * Every action from every state, for never-sold inventory (so "back in use"
 * is available). Written out in full so that a change to the table shows up
 * as a changed line here.
 */
const TABLE: Array<{ action: SerialAction; from: SerialStatus; outcome: Outcome }> = [
  { action: 'activate', from: 'available', outcome: { to: 'redeemed', releasesDevices: false } },
  { action: 'activate', from: 'redeemed', outcome: 'refused' },
  { action: 'activate', from: 'suspended', outcome: 'refused' },
  { action: 'activate', from: 'deactivated', outcome: 'refused' },
  { action: 'activate', from: 'revoked', outcome: 'refused' },
  { action: 'reactivate', from: 'available', outcome: 'refused' },
  { action: 'reactivate', from: 'redeemed', outcome: 'refused' },
  { action: 'reactivate', from: 'suspended', outcome: 'refused' },
  { action: 'reactivate', from: 'deactivated', outcome: { to: 'available', releasesDevices: false } },
  { action: 'reactivate', from: 'revoked', outcome: 'refused' },
  { action: 'deactivate', from: 'available', outcome: { to: 'deactivated', releasesDevices: true } },
  { action: 'deactivate', from: 'redeemed', outcome: { to: 'deactivated', releasesDevices: true } },
  { action: 'deactivate', from: 'suspended', outcome: { to: 'deactivated', releasesDevices: true } },
  { action: 'deactivate', from: 'deactivated', outcome: 'refused' },
  { action: 'deactivate', from: 'revoked', outcome: 'refused' },
  { action: 'suspend', from: 'available', outcome: { to: 'suspended', releasesDevices: false } },
  { action: 'suspend', from: 'redeemed', outcome: { to: 'suspended', releasesDevices: false } },
  { action: 'suspend', from: 'suspended', outcome: 'refused' },
  { action: 'suspend', from: 'deactivated', outcome: 'refused' },
  { action: 'suspend', from: 'revoked', outcome: 'refused' },
  { action: 'unsuspend', from: 'available', outcome: 'refused' },
  { action: 'unsuspend', from: 'redeemed', outcome: 'refused' },
  { action: 'unsuspend', from: 'suspended', outcome: { to: 'available', releasesDevices: false } },
  { action: 'unsuspend', from: 'deactivated', outcome: 'refused' },
  { action: 'unsuspend', from: 'revoked', outcome: 'refused' },
  { action: 'revoke', from: 'available', outcome: { to: 'revoked', releasesDevices: true } },
  { action: 'revoke', from: 'redeemed', outcome: { to: 'revoked', releasesDevices: true } },
  { action: 'revoke', from: 'suspended', outcome: { to: 'revoked', releasesDevices: true } },
  { action: 'revoke', from: 'deactivated', outcome: { to: 'revoked', releasesDevices: true } },
  { action: 'revoke', from: 'revoked', outcome: 'refused' },
];

const ALLOWED: Record<SerialStatus, SerialAction[]> = {
  available: ['activate', 'deactivate', 'suspend', 'revoke'],
  redeemed: ['deactivate', 'suspend', 'revoke'],
  suspended: ['deactivate', 'unsuspend', 'revoke'],
  deactivated: ['reactivate', 'revoke'],
  revoked: [],
};

describe('serial lifecycle table', () => {
  it('covers every action from every state', () => {
    expect(TABLE).toHaveLength(SERIAL_ACTIONS.length * STATES.length);
    expect(new Set(TABLE.map((c) => `${c.action}:${c.from}`)).size).toBe(TABLE.length);
  });

  it.each(TABLE.filter((c) => c.outcome !== 'refused'))('$action: $from → $outcome.to', ({ action, from, outcome }) => {
    expect(transition({ status: from, ...fresh }, action)).toMatchObject({ ok: true, ...(outcome as object) });
  });

  it.each(TABLE.filter((c) => c.outcome === 'refused'))('$action: refused from $from', ({ action, from }) => {
    expect(transition({ status: from, ...fresh }, action)).toEqual({ ok: false, allowedActions: ALLOWED[from] });
  });

  it.each(STATES)('lists the allowed actions from %s', (state) => {
    expect(allowedActions(state)).toEqual(ALLOWED[state]);
  });

  it('makes revoked terminal', () => {
    for (const action of SERIAL_ACTIONS) expect(transition({ status: 'revoked', ...sold }, action).ok).toBe(false);
  });
});

describe('returning to use', () => {
  it.each([
    { label: 'never-sold inventory', facts: fresh, to: 'available', redeems: false },
    { label: 'a serial redeemed before', facts: { redeemedAt: sold.redeemedAt, customerId: null }, to: 'redeemed', redeems: false },
    { label: 'a serial with a customer but no redemption date', facts: { redeemedAt: null, customerId: 7 }, to: 'redeemed', redeems: true },
    { label: 'a sold serial', facts: sold, to: 'redeemed', redeems: false },
  ])('unsuspend and reactivate bring $label back as $to', ({ facts, to, redeems }) => {
    expect(transition({ status: 'suspended', ...facts }, 'unsuspend')).toEqual({ ok: true, to, releasesDevices: false, redeems });
    expect(transition({ status: 'deactivated', ...facts }, 'reactivate')).toEqual({ ok: true, to, releasesDevices: false, redeems });
  });

  it('stamps the redemption only the first time', () => {
    expect(transition({ status: 'available', ...fresh }, 'activate')).toMatchObject({ redeems: true });
    for (const action of ['suspend', 'deactivate', 'revoke'] as const) {
      expect(transition({ status: 'redeemed', ...sold }, action)).toMatchObject({ ok: true, redeems: false });
    }
  });

  it('agrees with allowedActions for any facts (property)', () => {
    fc.assert(
      fc.property(
        fc.constantFrom(...STATES),
        fc.constantFrom(...SERIAL_ACTIONS),
        fc.option(fc.date({ noInvalidDate: true }), { nil: null }),
        fc.option(fc.integer({ min: 1 }), { nil: null }),
        (status, action, redeemedAt, customerId) => {
          const result = transition({ status, redeemedAt, customerId }, action);
          expect(result.ok).toBe(allowedActions(status).includes(action));
          if (result.ok) {
            expect(result.releasesDevices).toBe(action === 'deactivate' || action === 'revoke');
            if (result.to === 'redeemed') expect(result.redeems).toBe(redeemedAt === null);
            else expect(result.redeems).toBe(false);
          }
        },
      ),
    );
  });
});

describe('remainingActivations', () => {
  it.each([
    { label: 'available with free seats', status: 'available', max: 3, active: 1, remaining: 2 },
    { label: 'redeemed with free seats', status: 'redeemed', max: 3, active: 0, remaining: 3 },
    { label: 'redeemed and full', status: 'redeemed', max: 2, active: 2, remaining: 0 },
    { label: 'over the limit (never negative)', status: 'redeemed', max: 1, active: 3, remaining: 0 },
    { label: 'no seats at all', status: 'available', max: 0, active: 0, remaining: 0 },
    { label: 'suspended', status: 'suspended', max: 3, active: 1, remaining: 0 },
    { label: 'deactivated', status: 'deactivated', max: 3, active: 0, remaining: 0 },
    { label: 'revoked', status: 'revoked', max: 3, active: 0, remaining: 0 },
  ] as const)('$label: $remaining', ({ status, max, active, remaining }) => {
    expect(remainingActivations(status, max, active)).toBe(remaining);
  });
});
