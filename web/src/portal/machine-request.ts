/**
 * What the page can tell from a machine request file before sending it: the computer's name and
 * the license key it names, so the buyer sees which computer they are activating and the page can
 * pick the license. The server reads and checks the file itself (format, size, fields); anything
 * unreadable here is simply not previewed.
 */
export interface MachineRequestPreview {
  machineName: string | null;
  machineId: string | null;
  serial: string | null;
}

/** The server refuses larger files (MACHINE_REQUEST_UNREADABLE); the preview does not read them either. */
const MAX_BYTES = 16 * 1024;

const text = (value: unknown): string | null => (typeof value === 'string' && value.trim() ? value : null);

export async function readMachineRequest(file: File): Promise<MachineRequestPreview | null> {
  if (file.size > MAX_BYTES) return null;
  try {
    const content: unknown = JSON.parse((await file.text()).replace(/^\uFEFF/, ''));
    if (!content || typeof content !== 'object') return null;
    const fields = content as Record<string, unknown>;
    const preview = { machineName: text(fields.machineName), machineId: text(fields.machineId), serial: text(fields.serial) };
    return preview.machineId || preview.serial ? preview : null;
  } catch {
    return null;
  }
}

/** License keys compare without case, spaces or dashes, as the licensing runtime compares them. */
export function sameSerial(a: string, b: string): boolean {
  const plain = (s: string) => s.replace(/[\s-]/g, '').toUpperCase();
  return plain(a) === plain(b);
}
