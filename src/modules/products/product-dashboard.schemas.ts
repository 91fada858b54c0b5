import { Type } from '@sinclair/typebox';
import { Currency } from '../../platform/http/bounded.js';

// Schemas of the product dashboard, package readiness and REST configuration routes.

/** Sales windows of the performance section, in days ending today (UTC). */
export const PERFORMANCE_WINDOWS = [7, 30, 90, 365] as const;
export const Environment = Type.Union([Type.Literal('live'), Type.Literal('test')], { default: 'live', description: 'Which credential: live or test' });
export const EnvironmentQuery = Type.Object({ environment: Type.Optional(Environment) }, { additionalProperties: false });
const Open = (description: string) => Type.Object({}, { additionalProperties: true, description });
const Nullable = (description: string) => Type.Union([Open(description), Type.Null()]);

const CredentialStatus = Type.Object(
  {
    status: Type.String({ description: 'active, missing or rotation_required' }),
    ready: Type.Boolean(),
    isActive: Type.Boolean(),
    appId: Type.Union([Type.String(), Type.Null()]),
    productKeyPreview: Type.Union([Type.String(), Type.Null()]),
    created: Type.Boolean({ description: 'This call created the credential or its key' }),
    skipped: Type.Boolean(),
    rotationRequired: Type.Boolean(),
  },
  { additionalProperties: true },
);

export const Dashboard = Type.Object(
  {
    access: Type.Object({ analytics: Type.Boolean(), reviews: Type.Boolean(), files: Type.Boolean(), credentials: Type.Boolean() }),
    product: Open('The catalogue row; with analytics access also customerCount, orderCount, downloadsTotal; with files access fileCount'),
    health: Open('status (ready, ready_as_far_as_visible, incomplete), done, checked, missing (checklist keys)'),
    kpis: Type.Object({
      customerCount: Type.Union([Type.Number(), Type.Null()]),
      orderCount: Type.Union([Type.Number(), Type.Null()]),
      downloadsTotal: Type.Union([Type.Number(), Type.Null()]),
      ratingAverage: Type.Union([Type.Number(), Type.Null()]),
      ratingCount: Type.Union([Type.Number(), Type.Null()]),
    }),
    performance: Type.Object({
      available: Type.Boolean(),
      reason: Type.Union([Type.String(), Type.Null()]),
      ranges: Type.Array(Open(`One per window (${PERFORMANCE_WINDOWS.join(', ')} days): orders, units, grossCents, refundsCents, netCents in the requested currency; otherCurrencies lists what was left out`)),
    }),
    reviewSummary: Open('available; with reviews access: total, published, pending, hidden, averageRating, ratingCount, distribution'),
    readiness: Open('ready, items: [{ key, label, state: done | missing | unknown }]'),
    pluginPackage: Nullable('status, packageReady, lastGeneratedAt, variants, environment'),
    pluginConnectionStatus: Nullable('status (never_connected, connected, idle), lastPluginConnectionAt, environment'),
    restApi: Type.Union([Type.Ref('RestApi'), Type.Null()]),
    files: Type.Array(Type.Ref('FileMetadata')),
    versions: Type.Array(Type.Ref('VersionRecord')),
    reviews: Type.Array(Type.Ref('ReviewRecord')),
    recentActivity: Type.Array(Open('kind, occurredAt and the fields of the event')),
    storefrontDestination: Type.Object({ url: Type.String(), kind: Type.String({ description: 'product, workspace or none' }) }),
  },
  { additionalProperties: true },
);

export const DashboardQuery = Type.Object(
  {
    currency: Type.Optional(Currency({ default: 'usd', description: 'Three letters' })),
    environment: Type.Optional(Environment),
  },
  { additionalProperties: false },
);

export const PackageReadiness = Type.Object(
  {
    credentialStatus: Type.Union([CredentialStatus, Type.Null()]),
    status: Type.String(),
    packageReady: Type.Boolean(),
    lastGeneratedAt: Type.Union([Type.String({ format: 'date-time' }), Type.Null()]),
    lastPluginConnectionAt: Type.Union([Type.String({ format: 'date-time' }), Type.Null()]),
    supportedModes: Type.Array(Type.String()),
    rotationOverlapSeconds: Type.Integer({
      minimum: 0,
      description:
        'How long the previous product key of this environment stays accepted after a regenerate rotates it (PRODUCT_KEY_ROTATION_OVERLAP_DAYS on live, 0 on test), so a client can say so before rotating',
    }),
  },
  { additionalProperties: true },
);

export const RestConfigAnswer = Type.Object({ restApi: Type.Ref('RestApi') });
