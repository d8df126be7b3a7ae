/** The line a runner reads from its stdin for one call (the pipe protocol's request). */
import type { PipeRequest } from '../../domain/calls/ports.js';

const SMALL_INPUT_BYTES = 64 * 1024;

/**
 * The request as chunks to write in order, ending in a newline. A JSON input given as checked
 * text (`json`) is spliced in as it is, not parsed and serialized again.
 */
export function pipeRequestChunks(request: PipeRequest): (string | Buffer)[] {
  const json = request.json;
  if (!json) return [`${JSON.stringify(request)}\n`];
  // Every field but data and json, in one shape for every call (the type lists them all, so a
  // new field of PipeRequest must be added here); JSON.stringify leaves out the undefined ones.
  // An object rest (`{ json, data, ...rest }`) here made V8 build new hidden classes on every
  // call: several microseconds, and most of what a warm call left to the old generation (56 B
  // promoted per call with it, 7 B without; docs/performance.md, rule 2).
  const fields: Record<Exclude<keyof PipeRequest, 'data' | 'json'>, unknown> = {
    content_type: request.content_type,
    api_key: request.api_key,
    event: request.event,
    insights_token: request.insights_token,
  };
  const head = JSON.stringify(fields); // {"content_type":"json",…}
  // A small input goes as one string: one write to the runner's pipe instead of three (warm
  // calls are mostly small). A large one is not copied into a string.
  if (json.length <= SMALL_INPUT_BYTES) return [`${head.slice(0, -1)},"data":${json.toString('utf8')}}\n`];
  return [`${head.slice(0, -1)},"data":`, json, '}\n'];
}
