import { type Static, type TSchema, Type } from '@sinclair/typebox';
import { Email, Id, Text } from '../../platform/http/bounded.js';
import { ListEnvelope, PagingQuery } from '../../platform/http/schemas.js';
import { ActivateBody } from '../licensing/index.js';

const DateTime = Type.String({ format: 'date-time' });
const Nullable = <T extends TSchema>(schema: T) => Type.Union([schema, Type.Null()]);

export const WorkspaceRef = Text(63, {
  minLength: 1,
  pattern: '^[A-Za-z0-9-]+$',
  description: "The workspace's public slug or its id, as the portal URL shows it (`/portal/<workspace>`)",
});

export const LinkRequestBody = Type.Object({ workspace: WorkspaceRef, email: Email() }, { additionalProperties: false });

export const Accepted = Type.Object({ accepted: Type.Literal(true), message: Type.String() }, { additionalProperties: false });

export const SignInBody = Type.Object({ token: Text(100, { description: 'The `token` of the sign-in link’s fragment (`#token=pcl_…`)' }) }, { additionalProperties: false });

const SessionFields = {
  expiresAt: DateTime,
  customer: Type.Object({ email: Type.String(), firstName: Nullable(Type.String()), lastName: Nullable(Type.String()) }, { additionalProperties: false }),
  workspace: Type.Object(
    {
      id: Type.Integer(),
      name: Type.String(),
      slug: Nullable(Type.String()),
      portalUrl: Type.String({ format: 'uri', description: 'The portal’s address, for links back to it' }),
    },
    { additionalProperties: false },
  ),
};

export const SessionAnswer = Type.Object(
  {
    token: Type.String({ description: 'Bearer token for non-browser clients (`Authorization: Bearer pcs_…`); browsers use the HttpOnly cookie set with this answer' }),
    ...SessionFields,
  },
  { additionalProperties: false },
);

export const SessionInfo = Type.Object(SessionFields, { additionalProperties: false });

export const Ended = Type.Object({ ended: Type.Literal(true) }, { additionalProperties: false });

export const OrdersQuery = Type.Object(PagingQuery, { additionalProperties: false });

export const OrderRow = Type.Object(
  {
    order_id: Type.Integer(),
    purchased_at: DateTime,
    status: Type.String(),
    refund_status: Type.String({ description: 'none, partial or full' }),
    invoice_available: Type.Boolean({ description: 'true for paid managed-checkout orders' }),
    currency: Type.String(),
    total_cents: Type.Integer({ description: 'Minor units of `currency`' }),
    items: Type.Array(
      Type.Object(
        {
          order_item_id: Type.Integer(),
          product_id: Type.Integer(),
          product: Type.String(),
          amount_cents: Type.Integer({ description: 'What the buyer paid for the item, minor units of `currency`' }),
          currency: Type.String(),
          refunded_cents: Type.Integer(),
          refund_status: Type.String(),
        },
        { additionalProperties: false },
      ),
    ),
  },
  { additionalProperties: false, description: 'One of the buyer’s orders (hidden orders are never shown)' },
);

export const OrderList = ListEnvelope(OrderRow);

export const OrderIdParams = Type.Object({ orderId: Id() }, { additionalProperties: false });

export const LicenseRow = Type.Object(
  {
    serial_id: Type.Integer(),
    serial: Type.String({ description: 'The license key' }),
    product_id: Type.Integer(),
    product: Type.String(),
    status: Type.String({ description: 'available, redeemed, suspended, deactivated or revoked' }),
    expires_at: Nullable(DateTime),
    max_activations: Type.Integer(),
    active_activation_count: Type.Integer(),
    activations: Type.Array(
      Type.Object(
        { id: Type.Integer(), machine_name: Nullable(Type.String()), first_seen_at: DateTime, last_seen_at: DateTime },
        { additionalProperties: false, description: 'A device holding a seat' },
      ),
    ),
  },
  { additionalProperties: false },
);
export type LicenseRow = Static<typeof LicenseRow>;

export const LicenseList = Type.Object({ rows: Type.Array(LicenseRow) }, { additionalProperties: false });

export const SerialParams = Type.Object({ serialId: Id() }, { additionalProperties: false });
export const SeatParams = Type.Object({ serialId: Id(), activationId: Id() }, { additionalProperties: false });

/** The format name a plugin package writes into its machine request files. */
export const MACHINE_REQUEST_FORMAT = 'patchbay-machine-request/1';

/**
 * The machine request a plugin package writes for an offline activation: the runtime's activation
 * body, with the nonce required (the package accepts only a license file carrying the nonce of a
 * request it wrote, so a file without one could never be loaded) and the format named when given
 * (a later version of the file must not be read as this one).
 */
export const MachineRequest = Type.Composite(
  [
    Type.Omit(ActivateBody, ['nonce']),
    Type.Required(Type.Pick(ActivateBody, ['nonce'])),
    Type.Object({ format: Type.Optional(Type.Literal(MACHINE_REQUEST_FORMAT, { description: 'The file format; absent means this one' })) }),
  ],
  {
    additionalProperties: true,
    description:
      'The machine request file (`patchbay-machine-request/1`): productAppId, serial, machineId and nonce, and machineName, platform and appVersion when the plugin knows them, as the plugin wrote them',
  },
);

export const MachineRequestUpload = Type.Object(
  { file: MachineRequest },
  { additionalProperties: false, description: 'The machine request file the plugin wrote, as the multipart `file` (JSON content, at most 16 KiB)' },
);

export const OfflineActivation = Type.Object(
  {
    license: Type.String({ description: 'The license file’s content (JSON, format `patchbay-license/1`, carrying the signed license token); save it as `filename`' }),
    filename: Type.String(),
    activation: Type.Object({ id: Type.Integer(), machine_name: Nullable(Type.String()), first_seen_at: DateTime }, { additionalProperties: false }),
    expiresAt: Type.String({ format: 'date-time', description: 'When the license token expires (the product’s offline grace, never past the serial’s end)' }),
  },
  { additionalProperties: false },
);

export const FileParams = Type.Object({ fileId: Text(100, { minLength: 1, pattern: '^[A-Za-z0-9_-]+$' }) }, { additionalProperties: false });

export const DownloadRow = Type.Object(
  {
    file_id: Type.String(),
    product_id: Type.Integer(),
    product: Type.String(),
    filename: Type.String(),
    platform: Type.String(),
    type: Type.String(),
    version: Nullable(Type.String()),
    changelog: Nullable(Type.String({ description: 'The changelog of the file’s version, when the vendor recorded one' })),
    releasedAt: Nullable(DateTime),
    sizeBytes: Nullable(Type.Integer()),
    uploadedAt: DateTime,
  },
  { additionalProperties: false },
);
export type DownloadRow = Static<typeof DownloadRow>;

export const DownloadList = Type.Object({ rows: Type.Array(DownloadRow) }, { additionalProperties: false });

/** Lower-case words joined by single hyphens (a slug is also never all digits: checked by the service). */
export const SLUG_PATTERN = '^[a-z0-9]+(-[a-z0-9]+)*$';

export const PortalSettingsChange = Type.Object(
  {
    enabled: Type.Optional(Type.Boolean()),
    slug: Type.Optional(
      Type.Union([Type.String({ maxLength: 63, pattern: SLUG_PATTERN }), Type.Null()], {
        description: 'The public name in the portal URL (not all digits); null removes it (the URL then carries the workspace id)',
      }),
    ),
  },
  { additionalProperties: false },
);

export const PortalSettings = Type.Object(
  {
    enabled: Type.Boolean({ description: 'Whether buyers can sign in (off: every portal route answers 404 for this workspace)' }),
    slug: Nullable(Type.String()),
    url: Type.String({ format: 'uri', description: 'The portal address to share with buyers' }),
  },
  { additionalProperties: false, description: 'The workspace’s buyers’ portal' },
);
