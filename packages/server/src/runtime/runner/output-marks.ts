/**
 * Cuts a runner's stdout or stderr at the harness's output marks (catalog/templates/README.md,
 * "Output marks"): after each request the harness writes the runner's mark token on both streams,
 * so what comes before the n-th mark on a stream is the n-th request's output, however the
 * stream was chunked on its way here.
 */
export class OutputMarks {
  /** Marks seen so far on this stream: text arriving now belongs to request `seen + 1`. */
  seen = 0;
  /** The end of the last chunk when it could be the start of a mark split across chunks. */
  private held = '';

  constructor(private readonly mark: string) {}

  /**
   * Feeds one decoded chunk: `text(piece, request)` gets each piece of output with the number of
   * the request it belongs to (1-based, in the order requests were written), `marked(request)`
   * each time a request's output on this stream is complete.
   */
  feed(chunk: string, text: (piece: string, request: number) => void, marked: (request: number) => void): void {
    let s = this.held + chunk;
    this.held = '';
    let at: number;
    while ((at = s.indexOf(this.mark)) >= 0) {
      if (at > 0) text(s.slice(0, at), this.seen + 1);
      this.seen++;
      marked(this.seen);
      s = s.slice(at + this.mark.length);
    }
    const keep = this.partialMarkAtEnd(s);
    if (keep) {
      this.held = s.slice(s.length - keep);
      s = s.slice(0, s.length - keep);
    }
    if (s) text(s, this.seen + 1);
  }

  /** Length of the longest end of `s` that a mark starts with (0 when none). */
  private partialMarkAtEnd(s: string): number {
    const first = this.mark[0]!;
    for (let from = Math.max(0, s.length - this.mark.length + 1); from < s.length; from++) {
      if (s[from] === first && this.mark.startsWith(s.slice(from))) return s.length - from;
    }
    return 0;
  }
}
