import { Type } from '@sinclair/typebox';
import { Email, Text } from '../../platform/http/bounded.js';

// Schemas of the partner portal's sign-in and session routes.

export const SignInLinkBody = Type.Object({ email: Email() }, { additionalProperties: false });
export const SignInLinkAnswer = Type.Object({ accepted: Type.Literal(true), message: Type.String() });
/** Sign-in tokens are far shorter; anything longer is not one. */
export const SignInBody = Type.Object({ token: Text(100) }, { additionalProperties: false });
export const SessionAnswer = Type.Object(
  {
    token: Type.String({ description: 'Bearer token for non-browser clients (`Authorization: Bearer pps_…`); browsers use the HttpOnly cookie set with this answer' }),
    expiresAt: Type.String({ format: 'date-time' }),
    recipient: Type.Object({ id: Type.Integer(), email: Type.String(), emailVerified: Type.Boolean() }),
  },
  { additionalProperties: false },
);
export const SessionEnded = Type.Object({ ended: Type.Literal(true) });
