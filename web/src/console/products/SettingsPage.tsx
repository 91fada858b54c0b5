import { Paper } from '@mantine/core';
import { useMutation, useQueryClient } from '@tanstack/react-query';
import { api, unwrap } from '../../api/client';
import { notify } from '../../kit/notify';
import { ProductForm, type ProductSubmit } from './ProductForm';
import { useProduct } from './ProductLayout';
import { productKeys } from './queries';

/** The catalogue fields of the product; only the fields that changed are sent. */
export default function SettingsPage() {
  const product = useProduct();
  const client = useQueryClient();
  const save = useMutation({
    mutationFn: (changes: ProductSubmit) => unwrap(api.PATCH('/api/developer/products/{productId}', { params: { path: { productId: product.id } }, body: changes })),
    onSuccess: async (saved) => {
      notify(`${saved.name} is saved.`, 'green');
      await client.invalidateQueries({ queryKey: productKeys.all });
    },
  });
  return (
    <Paper withBorder p="md" maw={720}>
      <ProductForm key={product.updatedAt} product={product} submitLabel="Save the product" pending={save.isPending} error={save.error} onSubmit={(changes) => save.mutate(changes)} />
    </Paper>
  );
}
