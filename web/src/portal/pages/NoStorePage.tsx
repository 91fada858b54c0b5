import { EmptyState } from '../../kit/EmptyState';
import { PageHeader } from '../../kit/PageHeader';

/** `/portal/` without a store: each store has a portal address of its own. */
export default function NoStorePage() {
  return (
    <>
      <PageHeader title="Your purchases" />
      <EmptyState title="Open your store’s portal link">
        Each store has its own portal address. Use the “Open your purchases” button in your purchase e-mail, or the link on the store’s website or
        in your plugin’s menu.
      </EmptyState>
    </>
  );
}
