/** Closed vocabularies of the product routes, with the words the console shows for them. */

export const PLATFORMS = [
  { value: 'any', label: 'Any platform' },
  { value: 'windows', label: 'Windows' },
  { value: 'macos', label: 'macOS' },
  { value: 'linux', label: 'Linux' },
  { value: 'ios', label: 'iOS' },
  { value: 'android', label: 'Android' },
] as const;

export const FILE_TYPES = [
  { value: 'installer', label: 'Installer' },
  { value: 'plugin', label: 'Plugin' },
  { value: 'archive', label: 'Archive' },
  { value: 'sample_pack', label: 'Sample pack' },
  { value: 'preset', label: 'Presets' },
  { value: 'manual', label: 'Manual' },
  { value: 'other', label: 'Other' },
] as const;

export type Platform = (typeof PLATFORMS)[number]['value'];
export type FileType = (typeof FILE_TYPES)[number]['value'];

export const label = (options: ReadonlyArray<{ value: string; label: string }>, value: string) => options.find((o) => o.value === value)?.label ?? value;
