import createClient from 'openapi-fetch';
import type { components, paths } from './schema';
import { ApiProblem } from './problem';

export { ApiProblem, isProblem, type FieldProblem } from './problem';

export type { components, paths };
export type Schemas = components['schemas'];

/**
 * The one client every page uses: paths, parameters and bodies are the generated types of
 * docs/openapi.json (`npm run openapi` regenerates ./schema.d.ts). Same-origin cookies ride along;
 * nothing else is added, so a page cannot smuggle a token into a URL by accident.
 */
export const api = createClient<paths>({ baseUrl: '', credentials: 'same-origin' });

interface Answer<D> {
  data?: D;
  error?: unknown;
  response: Response;
}

/** Resolves to the success body, or throws an ApiProblem (the error answer, or no answer at all). */
export async function unwrap<D>(request: Promise<Answer<D>>): Promise<D> {
  let answer: Answer<D>;
  try {
    answer = await request;
  } catch (error) {
    throw ApiProblem.network(error);
  }
  if (answer.error !== undefined || !answer.response.ok) throw ApiProblem.fromAnswer(answer.response, answer.error);
  return answer.data as D;
}

/** Bytes sent so far of a request body, and its size. */
export interface UploadProgress {
  sent: number;
  total: number;
}

/**
 * A transport for one typed-client request whose body is `form`, sent with XMLHttpRequest: the one
 * browser API that reports upload progress (fetch does not). The typed client still builds the
 * request (base URL, path parameters, headers) and reads the answer; only the bytes travel another
 * way. Pass it as the request's `fetch`, with `bodySerializer: () => form`. Same-origin cookies ride
 * along as with fetch; `signal` cancels the upload.
 */
export function uploadTransport(form: FormData, onProgress: (progress: UploadProgress) => void, signal?: AbortSignal): (request: Request) => Promise<Response> {
  return (request) =>
    new Promise<Response>((resolve, reject) => {
      const xhr = new XMLHttpRequest();
      xhr.open(request.method, request.url);
      // The browser writes the multipart boundary of the form it sends; every other header is the client's.
      request.headers.forEach((value, name) => {
        if (name !== 'content-type') xhr.setRequestHeader(name, value);
      });
      xhr.responseType = 'blob';
      xhr.upload.onprogress = (event) => {
        if (event.lengthComputable) onProgress({ sent: event.loaded, total: event.total });
      };
      xhr.onload = () => {
        const headers = new Headers();
        for (const line of xhr.getAllResponseHeaders().trim().split(/[\r\n]+/)) {
          const at = line.indexOf(':');
          if (at > 0) headers.append(line.slice(0, at).trim(), line.slice(at + 1).trim());
        }
        const empty = xhr.status === 204 || xhr.status === 205 || xhr.status === 304;
        resolve(new Response(empty ? null : (xhr.response as Blob), { status: xhr.status, statusText: xhr.statusText, headers }));
      };
      xhr.onerror = () => reject(new TypeError('The upload did not reach the server'));
      xhr.onabort = () => reject(new DOMException('The upload was cancelled', 'AbortError'));
      if (signal?.aborted) return reject(new DOMException('The upload was cancelled', 'AbortError'));
      signal?.addEventListener('abort', () => xhr.abort(), { once: true });
      xhr.send(form);
    });
}
