import { describe, expect, it } from 'vitest';
import { exampleFor, fromPattern } from '../../src/platform/http/openapi-examples.js';

const noRefs = () => undefined;

describe('examples from patterns', () => {
  it.each([
    ['alternatives take the first', '^(7d|30d|all)$', '7d'],
    ['classes and counted repeats', '^[A-Za-z]{3}$', 'AAA'],
    ['optional parts are shown', '^https?://', 'https://'],
    ['comma lists keep one repetition', '^(none|partial|full)(,(none|partial|full))*$', 'none,none'],
    ['digit escapes', '^[1-9]\\d{0,9}$', '11'],
    ['an unanchored non-space', '\\S', 'x'],
  ])('%s: %s → %s', (_label, pattern, expected) => {
    expect(fromPattern(pattern)).toBe(expected);
    expect(new RegExp(pattern, 'u').test(expected)).toBe(true);
  });
});

describe('examples from schemas', () => {
  it.each([
    ['a schema example wins', { type: 'string', examples: ['given'] }, 'given'],
    ['then const', { const: 'paid' }, 'paid'],
    ['then the default', { type: 'integer', default: 50, minimum: 1 }, 50],
    ['then the first enum value', { type: 'string', enum: ['active', 'removed'] }, 'active'],
    ['a nullable value is shown with its value', { anyOf: [{ type: 'null' }, { type: 'string', format: 'email' }] }, 'ann.lee@example.com'],
    ['integers respect their minimum', { type: 'integer', minimum: 7 }, 7],
    ['strings respect their pattern', { type: 'string', pattern: '^file_[a-z0-9]{20}$' }, 'file_aaaaaaaaaaaaaaaaaaaa'],
    ['arrays have their minimum items', { type: 'array', minItems: 2, items: { type: 'boolean' } }, [true, true]],
  ])('%s', (_label, schema, expected) => {
    expect(exampleFor(schema, noRefs)).toEqual(expected);
  });

  it('fills objects property by property, guided by the names', () => {
    const schema = { type: 'object', properties: { email: { type: 'string' }, created_at: { type: 'string' }, currency: { type: 'string', pattern: '^[a-z]{3}$' } } };
    expect(exampleFor(schema, noRefs)).toEqual({ email: 'ann.lee@example.com', created_at: '2026-11-24T10:00:00.000Z', currency: 'usd' });
  });

  it('follows references and stops on recursion', () => {
    const node = { type: 'object', properties: { child: { $ref: '#/components/schemas/Node' } } };
    const value = exampleFor({ $ref: '#/components/schemas/Node' }, (ref) => (ref.endsWith('/Node') ? node : undefined));
    expect(JSON.stringify(value).length).toBeLessThan(1000);
  });
});
