import { Type } from '@sinclair/typebox';
import { Id, Int } from '../../platform/http/bounded.js';
import { EXPERIENCE_MODES, PACKAGE_VARIANTS, RELEASE_CHANNELS } from './package-templates.js';
import { DEFAULT_SETTINGS, MAX_UI_SIDE } from './packages.service.js';

// Schemas of the plugin package routes: the variant and the package settings a request may override.

export const ProductParams = Type.Object({ productId: Id() }, { additionalProperties: false });

const settingFields = {
  experienceMode: Type.Optional(Type.String({ maxLength: 40, description: `${EXPERIENCE_MODES.join(', ')} (default: saved, else ${DEFAULT_SETTINGS.experienceMode})` })),
  uiWidth: Type.Optional(Int(1, MAX_UI_SIDE, { description: `Panel width in pixels, 1–${MAX_UI_SIDE} (default: saved, else ${DEFAULT_SETTINGS.uiWidth})` })),
  uiHeight: Type.Optional(Int(1, MAX_UI_SIDE, { description: `Panel height in pixels, 1–${MAX_UI_SIDE} (default: saved, else ${DEFAULT_SETTINGS.uiHeight})` })),
  releaseChannel: Type.Optional(Type.String({ maxLength: 40, description: `Accepted: ${RELEASE_CHANNELS.join(', ')}` })),
  environment: Type.Optional(Type.Union([Type.Literal('live'), Type.Literal('test')], { description: 'Whose credential the package embeds (default live)' })),
};
const variantField = Type.String({ maxLength: 40, description: `${PACKAGE_VARIANTS.join(' or ')}: select explicitly` });

export const PackageQuery = Type.Object({ variant: variantField, ...settingFields }, { additionalProperties: false });
export const PackageBody = Type.Object({ variant: variantField, ...settingFields }, { additionalProperties: false });
export const StorefrontQuery = Type.Object({ uiWidth: settingFields.uiWidth, uiHeight: settingFields.uiHeight }, { additionalProperties: false });
