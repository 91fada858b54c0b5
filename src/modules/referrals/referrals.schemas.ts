import { Type } from '@sinclair/typebox';
import { Id, Int, Text } from '../../platform/http/bounded.js';
import { REFERRAL_PARAM } from './referrals.service.js';

// Schemas of the public referral link route.

export const ReferralParams = Type.Object({ code: Text(100, { minLength: 1, description: 'The agreement’s `referral_code`' }) }, { additionalProperties: false });
export const ReferralQuery = Type.Object(
  { product: Type.Optional(Id({ description: 'A product id of the agreement’s workspace: its storefront page is the destination' })) },
  { additionalProperties: false },
);

/** The 303 answer: no body, the storefront address in `Location`. */
export const ReferralRedirect = {
  description: `Redirect to the storefront (with \`${REFERRAL_PARAM}\` when the agreement is active)`,
  type: 'null',
  headers: {
    type: 'object',
    properties: {
      location: { type: 'string', description: `The storefront address, with \`${REFERRAL_PARAM}\` when the agreement is active` },
      'cache-control': { type: 'string', description: 'no-store' },
      'referrer-policy': { type: 'string', description: 'no-referrer' },
    },
  },
} as const;

// Schemas of the partner portal's visits of a referral link.

export const VisitsParams = Type.Object({ id: Id({ description: 'The agreement' }) }, { additionalProperties: false });
export const VisitsQuery = Type.Object(
  { days: Type.Optional(Int(1, 90, { default: 30, description: 'How many UTC days, today included, `daily` covers' })) },
  { additionalProperties: false },
);
const Count = Type.Integer({ minimum: 0 });
export const ReferralVisits = Type.Object({
  agreement_id: Type.Integer(),
  days: Type.Integer({ description: 'The days `daily` covers, today (UTC) the last' }),
  total_visits: Type.Integer({ minimum: 0, description: 'Every recorded visit since the link was first followed' }),
  last_visit_at: Type.Union([Type.String({ format: 'date-time' }), Type.Null()]),
  period_visits: Type.Integer({ minimum: 0, description: 'Visits within `daily`' }),
  period_bot_visits: Type.Integer({ minimum: 0, description: 'Of those, by clients that named themselves bots, crawlers or link previews' }),
  daily: Type.Array(Type.Object({ date: Type.String({ format: 'date', description: 'A UTC day' }), visits: Count, bot_visits: Count }), { description: 'One entry per day, oldest first, days without visits included (0)' }),
});
