import { Type } from '@sinclair/typebox';
import { Text } from '../../platform/http/bounded.js';

// Schemas of the sandbox provider's hosted onboarding page.

/** Onboarding tokens are far shorter; anything longer is not one. */
export const OnboardingParams = Type.Object({ token: Text(100) }, { additionalProperties: false });
export const Html = Type.String({ description: 'An HTML page (text/html)' });
