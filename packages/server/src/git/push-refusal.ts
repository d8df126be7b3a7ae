/**
 * A push refused by the service itself (before git could answer) still has to be answered in
 * the Git protocol: git prints neither the body nor the reason of an HTTP error on a push, only
 * "RPC failed; HTTP 413". So the refusal is written as `git receive-pack` would write it: the
 * message on side band 2 (shown as `remote: …`), then a report that the unpack failed and each
 * pushed ref was rejected (shown as `! [remote rejected] main -> main (…)`).
 */

/** The commands at the start of a receive-pack request, as far as `head` holds them. */
export interface PushCommands {
  refs: string[];
  capabilities: Set<string>;
}

/**
 * Reads the command list (`<old> <new> <ref>\0<capabilities>`, one pkt-line each, ending with a
 * flush) from the first bytes of a receive-pack request. Undefined when `head` does not hold a
 * whole, well-formed command list.
 */
export function parsePushCommands(head: Buffer): PushCommands | undefined {
  const refs: string[] = [];
  let capabilities = new Set<string>();
  let at = 0;
  while (at + 4 <= head.length) {
    const len = parseInt(head.subarray(at, at + 4).toString('latin1'), 16);
    if (!Number.isInteger(len) || (len !== 0 && len < 4)) return undefined;
    if (len === 0) return refs.length ? { refs, capabilities } : undefined;
    if (at + len > head.length) return undefined;
    let line = head.subarray(at + 4, at + len).toString('utf8');
    at += len;
    if (line.endsWith('\n')) line = line.slice(0, -1);
    const nul = line.indexOf('\0');
    if (nul >= 0) {
      if (!refs.length)
        capabilities = new Set(
          line
            .slice(nul + 1)
            .split(' ')
            .filter(Boolean),
        );
      line = line.slice(0, nul);
    }
    const ref = line.split(' ')[2];
    if (ref && !/[\s\0]/.test(ref)) refs.push(ref);
    else return undefined;
  }
  return undefined;
}

/**
 * The body of a receive-pack result refusing the whole push with `message`, in the format the
 * client asked for (side band or not). `reason` is the short text after each rejected ref.
 */
export function refusalResponse(commands: PushCommands, message: string, reason: string): Buffer {
  const report = [pkt(`unpack ${reason}\n`), ...commands.refs.map((ref) => pkt(`ng ${ref} ${reason}\n`)), FLUSH];
  const sideBand = commands.capabilities.has('side-band-64k') || commands.capabilities.has('side-band');
  if (!sideBand) return Buffer.concat(report);
  const max = commands.capabilities.has('side-band-64k') ? 65515 : 995;
  const out: Buffer[] = [];
  const band = (n: number, data: Buffer) => {
    for (let i = 0; i < data.length; i += max) out.push(pkt(Buffer.concat([Buffer.from([n]), data.subarray(i, i + max)])));
  };
  band(2, Buffer.from(message.endsWith('\n') ? message : `${message}\n`));
  band(1, Buffer.concat(report));
  out.push(FLUSH);
  return Buffer.concat(out);
}

const FLUSH = Buffer.from('0000');

function pkt(data: string | Buffer): Buffer {
  const body = typeof data === 'string' ? Buffer.from(data) : data;
  return Buffer.concat([Buffer.from((body.length + 4).toString(16).padStart(4, '0')), body]);
}
