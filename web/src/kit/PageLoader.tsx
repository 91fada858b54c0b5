import { Center, Loader } from '@mantine/core';

/** While a page's code or first data arrives: a spinner with a name for screen readers. */
export function PageLoader({ label = 'Loading the page' }: { label?: string }) {
  return (
    <Center py="xl">
      <Loader aria-label={label} role="status" />
    </Center>
  );
}
