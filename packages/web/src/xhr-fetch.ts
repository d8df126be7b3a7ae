/**
 * A fetch made of XMLHttpRequest, for uploads: fetch cannot report how much of a request body
 * has been sent (streamed request bodies need HTTP/2), XMLHttpRequest's upload events can. The
 * typed client takes it as its `fetch`, so uploads still go through the client.
 */
export function xhrFetch(onUploadProgress: (loaded: number, total: number | undefined) => void): typeof fetch {
  return (input, init = {}) =>
    new Promise<Response>((resolve, reject) => {
      const xhr = new XMLHttpRequest();
      xhr.open(init.method ?? 'GET', input instanceof Request ? input.url : String(input));
      new Headers(init.headers).forEach((value, name) => xhr.setRequestHeader(name, value));
      xhr.responseType = 'arraybuffer';
      xhr.upload.onprogress = (e) => onUploadProgress(e.loaded, e.lengthComputable ? e.total : undefined);
      xhr.onload = () => {
        const headers = new Headers();
        for (const line of xhr
          .getAllResponseHeaders()
          .trim()
          .split(/[\r\n]+/)) {
          const colon = line.indexOf(':');
          if (colon > 0) headers.append(line.slice(0, colon).trim(), line.slice(colon + 1).trim());
        }
        const empty = xhr.status === 204 || xhr.status === 304 || init.method === 'HEAD';
        resolve(new Response(empty ? null : (xhr.response as ArrayBuffer), { status: xhr.status, statusText: xhr.statusText, headers }));
      };
      xhr.onerror = () => reject(new TypeError('the upload failed: the connection was lost'));
      xhr.onabort = () => reject(new DOMException('the upload was stopped', 'AbortError'));
      init.signal?.addEventListener('abort', () => xhr.abort());
      xhr.send((init.body as XMLHttpRequestBodyInit | null | undefined) ?? null);
    });
}
