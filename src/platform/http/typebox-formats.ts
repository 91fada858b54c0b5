import { FormatRegistry } from '@sinclair/typebox';
import { isEmail } from '../import/fields.js';

/**
 * The string formats TypeBox's own checker (TypeCompiler, Value.Check) knows nothing of until they are
 * registered: without them a schema with `format: 'date-time'` fails every value ("Unknown format").
 * Request bodies are checked by Ajv with ajv-formats; this is for schemas checked in code, such as the
 * webhook events' payloads. Import it before compiling such a schema. The operator fixtures use the
 * same definitions.
 */
export function registerTypeboxFormats(): void {
  if (!FormatRegistry.Has('email')) FormatRegistry.Set('email', isEmail);
  if (!FormatRegistry.Has('uri')) {
    FormatRegistry.Set('uri', (v) => {
      try {
        return ['http:', 'https:'].includes(new URL(v).protocol);
      } catch {
        return false;
      }
    });
  }
  if (!FormatRegistry.Has('date-time')) {
    FormatRegistry.Set('date-time', (v) => /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?(Z|[+-]\d{2}:\d{2})$/.test(v) && !Number.isNaN(Date.parse(v)));
  }
}
