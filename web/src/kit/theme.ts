import { createTheme, type CSSVariablesResolver, darken, defaultVariantColorsResolver, parseThemeColor, type VariantColorsResolver } from '@mantine/core';

const FONTS = 'system-ui, -apple-system, "Segoe UI", Roboto, "Helvetica Neue", Arial, sans-serif';

/**
 * Mantine's light and outline variants write a colour's shade 6 (or its light tint) on a tinted
 * background: yellow, green or orange text then reads below WCAG AA (4.5:1). Their text here is the
 * colour's darkest shade, darkened further, which keeps the hue and passes on every palette colour.
 */
const variantColorResolver: VariantColorsResolver = (input) => {
  const colors = defaultVariantColorsResolver(input);
  if (input.variant !== 'light' && input.variant !== 'outline') return colors;
  const parsed = parseThemeColor({ color: input.color ?? input.theme.primaryColor, theme: input.theme });
  if (!parsed.isThemeColor) return colors;
  const text = darken(input.theme.colors[parsed.color]![9], 0.4);
  return { ...colors, color: text, hoverColor: text, ...(input.variant === 'outline' ? { border: text } : {}) };
};

export const theme = createTheme({
  primaryColor: 'indigo',
  // Shade 6 of indigo under white text reads at 4.3:1; shade 7 passes WCAG AA (4.5:1) for button labels.
  primaryShade: { light: 7, dark: 8 },
  defaultRadius: 'md',
  fontFamily: FONTS,
  headings: { fontFamily: FONTS },
  // Visible keyboard focus everywhere, not only after a key press was detected.
  focusRing: 'auto',
  variantColorResolver,
});

/**
 * Mantine's "dimmed" text is gray 6, which reads at 3.3:1 on white: below WCAG AA (4.5:1) for body
 * text. Gray 7 keeps the hierarchy and passes (8:1); error text gets the same treatment.
 */
export const cssVariablesResolver: CSSVariablesResolver = () => ({
  variables: {},
  light: {
    '--mantine-color-dimmed': 'var(--mantine-color-gray-7)',
    '--mantine-color-placeholder': 'var(--mantine-color-gray-7)',
    // Red 6 (field errors) reads at 3.6:1 on white; red 8 at 5.6:1.
    '--mantine-color-error': 'var(--mantine-color-red-8)',
  },
  dark: { '--mantine-color-dimmed': 'var(--mantine-color-dark-1)', '--mantine-color-placeholder': 'var(--mantine-color-dark-1)' },
});
