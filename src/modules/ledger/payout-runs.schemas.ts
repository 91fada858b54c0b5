import { Type, type TSchema } from '@sinclair/typebox';
import { Id } from '../../platform/http/bounded.js';
import { Transfer } from './ledger.schemas.js';

const Nullable = <T extends TSchema>(t: T) => Type.Union([t, Type.Null()]);
const Time = Type.String({ format: 'date-time' });

export const RunIdParams = Type.Object({ runId: Id() }, { additionalProperties: false });

export const RequestRunBody = Type.Object(
  { livemode: Type.Optional(Type.Boolean({ default: false, description: 'Live transfers through live providers (the workspace owner only); default: test mode, the sandbox providers' })) },
  { additionalProperties: false },
);

export const PayoutRun = Type.Object(
  {
    id: Type.Integer(),
    livemode: Type.Boolean(),
    state: Type.Union(['queued', 'running', 'succeeded', 'failed'].map((s) => Type.Literal(s)), { description: 'The run’s own state; each transfer has its own' }),
    requested_by: Nullable(Type.Object({ id: Type.Integer(), email: Type.String() }, { additionalProperties: false })),
    created_at: Time,
    started_at: Nullable(Time),
    finished_at: Nullable(Time),
    failure: Nullable(Type.String({ description: 'Why a failed run stopped (after its retries)' })),
    transfers: Type.Array(Transfer, { description: 'This workspace’s transfers the run reserved or took over, with their current states (at most 1,000)' }),
    transfers_truncated: Type.Boolean(),
    skipped: Type.Array(
      Type.Object({ agreement_id: Type.Integer(), currency: Type.String(), reason: Type.String(), transfer_id: Type.Optional(Type.Integer()) }, { additionalProperties: true }),
      { description: 'Agreements of this workspace the run did not pay, with why (`below_minimum`, `no_ready_destination`, `destination_on_hold`, `transfer_in_flight`, `agreement_not_live`, `provider_not_configured`)' },
    ),
  },
  { additionalProperties: false },
);
