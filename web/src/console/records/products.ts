import { useQuery } from '@tanstack/react-query';
import { api, unwrap } from '../../api/client';
import { useMemberAccess } from '../member-access';

export interface ProductOption {
  value: string;
  label: string;
}

/**
 * The products the member may filter by, with their names, from the first source their permissions
 * open: the catalogue (`products.view`), the purchase filter options (`purchases.view`) or the serial
 * inventory (`serials.view`). A member with none of them gets no filter, and nothing is requested.
 */
export function useProductOptions() {
  const access = useMemberAccess();
  const source = !access.loaded ? null : access.can('products.view') ? 'catalogue' : access.can('purchases.view') ? 'purchases' : access.can('serials.view') ? 'serials' : null;
  const query = useQuery({
    queryKey: ['console', 'product-options', source],
    enabled: source !== null,
    staleTime: 60_000,
    queryFn: async (): Promise<ProductOption[]> => {
      if (source === 'catalogue') {
        const page = await unwrap(api.GET('/api/developer/products', { params: { query: { limit: 500 } } }));
        return page.rows.map((p) => ({ value: String(p.id), label: p.name }));
      }
      if (source === 'purchases') {
        const options = await unwrap(api.GET('/api/developer/purchases/filter-options'));
        return options.products.map((p) => ({ value: String(p.id), label: p.name }));
      }
      const inventory = await unwrap(api.GET('/api/developer/serials/available-by-product', { params: { query: { limit: 1 } } }));
      return inventory.products.map((p) => ({ value: String(p.productId), label: p.product }));
    },
  });
  const options = query.data ?? [];
  const names = new Map(options.map((o) => [Number(o.value), o.label]));
  return {
    options,
    /** The product's name, or its id while names are unknown. */
    name: (id: number) => names.get(id) ?? `Product ${id}`,
  };
}
