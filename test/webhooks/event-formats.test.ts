import { describe, expect, it } from 'vitest';
// Only the catalogue: nothing here loads the operator fixtures, which register TypeBox formats of their own,
// so this is what a server process (which never loads them) checks payloads with.
import { WEBHOOK_EVENTS } from '../../src/modules/webhooks/webhooks.events.js';

describe('webhook event payload checks outside the test fixtures', () => {
  it('accept a date-time and refuse a malformed one (the formats are registered by the catalogue itself)', () => {
    const payload = {
      activation_id: 1, serial_id: 2, product_id: 3, machine_id: 'm', machine_name: null, platform: null, app_version: null,
      activated_at: new Date().toISOString(), via: 'runtime',
    };
    const check = WEBHOOK_EVENTS['activation.created'].check;
    expect([...check.Errors(payload)].map((e) => e.message)).toEqual([]);
    expect(check.Check({ ...payload, activated_at: 'yesterday' })).toBe(false);
  });
});
