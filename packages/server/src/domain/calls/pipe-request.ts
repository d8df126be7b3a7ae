/** The line a runner reads from its stdin for one call (the pipe protocol's request). */
import type { PipeRequest } from './ports.js';

const SMALL_INPUT_BYTES = 64 * 1024;

/**
 * The request as chunks to write in order, ending in a newline. A JSON input given as checked
 * text (`json`) is spliced in as it is, not parsed and serialized again.
 */
export function pipeRequestChunks(request: PipeRequest): (string | Buffer)[] {
  if (!request.json) return [`${JSON.stringify(request)}\n`];
  const { json, data: _data, ...rest } = request;
  const head = JSON.stringify(rest); // {"content_type":"json",…}
  // A small input goes as one string: one write to the runner's pipe instead of three (warm
  // calls are mostly small). A large one is not copied into a string.
  if (json.length <= SMALL_INPUT_BYTES) return [`${head.slice(0, -1)},"data":${json.toString('utf8')}}\n`];
  return [`${head.slice(0, -1)},"data":`, json, '}\n'];
}
