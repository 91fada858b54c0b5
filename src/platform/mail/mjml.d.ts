// mjml 5 ships no type declarations; this is the one function Patchbay calls.
declare module 'mjml' {
  interface MjmlError {
    line: number;
    message: string;
    tagName: string;
    formattedMessage: string;
  }
  export default function mjml2html(
    input: string,
    options?: { validationLevel?: 'strict' | 'soft' | 'skip'; minify?: boolean; keepComments?: boolean; fonts?: Record<string, string> },
  ): Promise<{ html: string; errors: MjmlError[] }>;
}
