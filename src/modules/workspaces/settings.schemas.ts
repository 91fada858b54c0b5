import { Type } from '@sinclair/typebox';
import { Name, Text } from '../../platform/http/bounded.js';

const Url = Text(2000, { format: 'uri', pattern: '^https?://' });

export const WorkspaceSettings = Type.Object(
  {
    id: Type.Integer(),
    name: Type.String(),
    storefront_url: Type.Union([Type.String(), Type.Null()], { description: 'Where buyers find the products (a product’s own storefront URL wins); packages and referral links use it' }),
    partner_programs_enabled: Type.Boolean({ description: 'Off: partner programs, their referral links and accounting are closed for the workspace (agreements are kept)' }),
    customer_portal_enabled: Type.Boolean({ description: 'Whether buyers can sign in to the workspace’s portal (`PATCH /api/developer/customer-portal` changes it)' }),
    keep_serials_on_refund: Type.Boolean({ description: 'On: a fully refunded purchase keeps its serial active. Off (the default): a full refund revokes the serial sold with the item, on every channel; a partial refund changes no serial' }),
    customer_portal_url: Type.String({ format: 'uri', description: 'The buyers’ portal address to share with buyers: where they see their orders, keys, devices and downloads' }),
  },
  { additionalProperties: true },
);

export const ChangeWorkspaceSettings = Type.Object(
  {
    name: Type.Optional(Name()),
    storefront_url: Type.Optional(Type.Union([Url, Type.Null()])),
    partner_programs_enabled: Type.Optional(Type.Boolean()),
    keep_serials_on_refund: Type.Optional(Type.Boolean()),
  },
  { additionalProperties: false, minProperties: 1 },
);
