import { AppError } from '../../platform/http/errors.js';
import { ImportErrors } from '../../platform/import/errors.js';
import { readOptionalId } from '../../platform/import/fields.js';
import type { ProductRef } from './products.repo.js';
import type { ProductResolver } from './products.service.js';

// Mappings are operation data, never a place for secrets (contract 2.6).
const CREDENTIAL_KEY = /(pass(word|wd)?|secret|token|api[_-]?key|apikey|credential|auth|private[_-]?key|bearer|session)/i;

function findCredentialKey(value: unknown, path: string): string | null {
  if (value === null || typeof value !== 'object') return null;
  for (const [key, inner] of Object.entries(value)) {
    if (CREDENTIAL_KEY.test(key)) return `${path}.${key}`;
    const nested = findCredentialKey(inner, `${path}.${key}`);
    if (nested) return nested;
  }
  return null;
}

/**
 * `productMappings` maps a product reference used in the file (a product name
 * or an id from another system) to a product id of this workspace:
 * `{ "Old Synth Name": 12, "9001": 12 }`. Targets must be products the caller
 * can see; a mapping never widens scope.
 */
export class ProductMapping {
  private constructor(
    private readonly resolver: ProductResolver,
    private readonly mapped: Map<string, ProductRef>,
  ) {}

  static parse(resolver: ProductResolver, input: unknown): ProductMapping {
    const credential = findCredentialKey(input, 'productMappings');
    if (credential) {
      throw new AppError(ImportErrors.CREDENTIALS_NOT_ALLOWED, `${credential} looks like a credential; productMappings must not carry secrets`);
    }
    const mapped = new Map<string, ProductRef>();
    if (input === undefined || input === null) return new ProductMapping(resolver, mapped);
    if (typeof input !== 'object' || Array.isArray(input)) {
      throw new AppError(ImportErrors.INVALID_PRODUCT_MAPPING, 'productMappings must be an object of source product → product id');
    }
    const errors: Array<{ path: string; message: string }> = [];
    for (const [key, target] of Object.entries(input)) {
      const id = readOptionalId(target, key);
      const product = id.ok && id.value !== null ? resolver.byIdOrUndefined(id.value) : undefined;
      if (!product) errors.push({ path: `body/productMappings/${key}`, message: 'must be the id of a product you can access' });
      else mapped.set(key.trim().toLowerCase(), product);
    }
    if (errors.length > 0) throw new AppError(ImportErrors.INVALID_PRODUCT_MAPPING, 'productMappings names products you cannot access', { errors });
    return new ProductMapping(resolver, mapped);
  }

  /** Resolves a row's product reference: mapping first, then the workspace's own ids and names. */
  resolve(productId: number | null, productName: string | null): { product: ProductRef | null; field?: string } {
    if (productId !== null) {
      const product = this.mapped.get(String(productId)) ?? this.resolver.byIdOrUndefined(productId);
      return product ? { product } : { product: null, field: 'productId' };
    }
    if (productName !== null) {
      const product = this.mapped.get(productName.toLowerCase()) ?? this.resolver.byNameOrUndefined(productName);
      return product ? { product } : { product: null, field: 'productName' };
    }
    return { product: null };
  }
}
