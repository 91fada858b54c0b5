import { Button, Group, ScrollArea, Stack, Text } from '@mantine/core';
import { useQuery } from '@tanstack/react-query';
import { NavLink, Outlet, useOutletContext, useParams } from 'react-router';
import { isProblem } from '../../api/client';
import { EmptyState } from '../../kit/EmptyState';
import { PageHeader } from '../../kit/PageHeader';
import { QueryState } from '../../kit/QueryState';
import { StatusBadge } from '../../kit/StatusBadge';
import { type Permission, useMemberAccess } from '../member-access';
import { type Product, productQuery } from './queries';

/** The product's sections; each shows only when the member holds what its API routes require. */
const SECTIONS: Array<{ path: string; label: string; permission: Permission }> = [
  { path: '', label: 'Overview', permission: 'products.view' },
  { path: 'files', label: 'Delivery files', permission: 'product_files.view' },
  { path: 'versions', label: 'Versions', permission: 'products.view' },
  { path: 'reviews', label: 'Reviews', permission: 'reviews.view' },
  { path: 'credentials', label: 'Credentials', permission: 'credentials.view' },
  { path: 'packages', label: 'Plugin packages', permission: 'product_files.view' },
  { path: 'settings', label: 'Settings', permission: 'products.manage' },
];

/** The product the section pages work on, loaded once by the layout. */
export const useProduct = () => useOutletContext<Product>();

export function useProductId(): number {
  const { productId } = useParams();
  return Number(productId);
}

function ProductFrame({ product }: { product: Product }) {
  const access = useMemberAccess();
  return (
    <>
      <PageHeader
        title={product.name}
        description={
          <Group gap="xs" component="span">
            <StatusBadge status={product.status} />
            <Text component="span" size="sm" c="dimmed">
              App id {product.productAppId}
            </Text>
          </Group>
        }
      />
      <Stack gap="lg">
        <ScrollArea type="auto" offsetScrollbars>
          <Group component="nav" aria-label="Product sections" gap="xs" wrap="nowrap">
            {SECTIONS.filter((s) => access.can(s.permission)).map((s) => (
              <NavLink key={s.path} to={s.path ? `/products/${product.id}/${s.path}` : `/products/${product.id}`} end style={{ textDecoration: 'none' }}>
                {({ isActive }) => (
                  <Button component="span" variant={isActive ? 'filled' : 'default'} size="sm">
                    {s.label}
                  </Button>
                )}
              </NavLink>
            ))}
          </Group>
        </ScrollArea>
        <Outlet context={product} />
      </Stack>
    </>
  );
}

/** A product's frame: its name and status, the sections the member may open, and the section. */
export default function ProductLayout() {
  const productId = useProductId();
  const query = useQuery({ ...productQuery(productId), enabled: Number.isInteger(productId) && productId > 0 });
  if (!Number.isInteger(productId) || productId < 1 || isProblem(query.error, 404) || isProblem(query.error, 400)) {
    return (
      <>
        <PageHeader title="Product not found" />
        <EmptyState title="There is no such product" action={<Button component={NavLink} to="/products">Back to the products</Button>}>
          It may belong to another workspace, or it is not assigned to you.
        </EmptyState>
      </>
    );
  }
  return (
    <QueryState query={query} label="Loading the product">
      {(product) => <ProductFrame product={product} />}
    </QueryState>
  );
}
