import '@mantine/core/styles.css';
import { MantineProvider } from '@mantine/core';
import { type QueryClient, QueryClientProvider } from '@tanstack/react-query';
import { setNonce } from 'get-nonce';
import type { ReactNode } from 'react';
import { cspNonce } from './nonce';
import { cssVariablesResolver, theme } from './theme';

const nonce = cspNonce();
// A modal locks the page's scroll with a <style> tag (react-remove-scroll), which takes its nonce from get-nonce.
setNonce(nonce);

/** Everything an app needs around its router: the theme and server state (apps that notify add kit/Notices). */
export function AppProviders({ client, children }: { client: QueryClient; children: ReactNode }) {
  return (
    <MantineProvider theme={theme} cssVariablesResolver={cssVariablesResolver} getStyleNonce={() => nonce} defaultColorScheme="light">
      <QueryClientProvider client={client}>{children}</QueryClientProvider>
    </MantineProvider>
  );
}
