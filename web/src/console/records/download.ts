import { ApiProblem } from '../../api/client';

interface BlobAnswer {
  /** A Blob: the request is made with `parseAs: 'blob'` (the generated types still say text). */
  data?: unknown;
  error?: unknown;
  response: Response;
}

/**
 * Saves a CSV the API answered (an export, an import template) as a file, under the name its
 * `Content-Disposition` gives. The request goes through the typed client like any other (so it
 * carries the workspace header a plain link could not); the file is held in memory until saved.
 */
export async function saveDownload(request: Promise<BlobAnswer>, fallbackName: string): Promise<void> {
  let answer: BlobAnswer;
  try {
    answer = await request;
  } catch (error) {
    throw ApiProblem.network(error);
  }
  if (answer.error !== undefined || !answer.response.ok || !(answer.data instanceof Blob)) throw ApiProblem.fromAnswer(answer.response, answer.error);
  const named = /filename="([^"]+)"/.exec(answer.response.headers.get('content-disposition') ?? '')?.[1];
  const url = URL.createObjectURL(answer.data);
  try {
    const link = document.createElement('a');
    link.href = url;
    link.download = named ?? fallbackName;
    link.rel = 'noopener';
    document.body.append(link);
    link.click();
    link.remove();
  } finally {
    // The click has handed the file to the browser's download; the URL may go once this task ends.
    setTimeout(() => URL.revokeObjectURL(url), 0);
  }
}

/** "customers-2026-11-25.csv" */
export const datedName = (stem: string) => `${stem}-${new Date().toISOString().slice(0, 10)}.csv`;
