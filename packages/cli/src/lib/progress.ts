/**
 * A one-line progress indicator on stderr, only when stderr is a terminal: a bar when the total
 * is known, a spinner with the count so far otherwise. Nothing is written when stderr is a file
 * or a pipe, so scripts and logs stay clean.
 */
import { formatBytes } from './output.js';

const FRAMES = ['⠋', '⠙', '⠹', '⠸', '⠼', '⠴', '⠦', '⠧', '⠇', '⠏'];
const WIDTH = 24;

export type Unit = 'bytes' | 'files' | 'seconds';

export class Progress {
  private loaded = 0;
  private total: number | undefined;
  private frame = 0;
  private shown = false;
  private lastDraw = 0;
  private timer: NodeJS.Timeout | undefined;
  private readonly started = Date.now();
  readonly enabled: boolean;

  constructor(
    private label: string,
    private readonly unit: Unit = 'bytes',
    private readonly stream: NodeJS.WriteStream = process.stderr,
  ) {
    this.enabled = Boolean(stream.isTTY) && process.env.TERM !== 'dumb';
    if (this.enabled) {
      // The spinner turns even when no data arrives (waiting for a build or a call).
      this.timer = setInterval(() => this.draw(true), 100);
      this.timer.unref();
    }
  }

  setLabel(label: string): void {
    this.label = label;
    this.draw(true);
  }

  update(loaded: number, total?: number): void {
    this.loaded = loaded;
    if (total !== undefined) this.total = total;
    this.draw(false);
  }

  add(n: number): void {
    this.update(this.loaded + n);
  }

  /** Erases the line (before other output goes to the same terminal); the next update redraws it. */
  clear(): void {
    if (!this.enabled || !this.shown) return;
    this.stream.write('\r\x1b[2K');
    this.shown = false;
  }

  /** Stops and erases the indicator. */
  done(): void {
    if (this.timer) clearInterval(this.timer);
    this.timer = undefined;
    this.clear();
  }

  private amount(n: number): string {
    if (this.unit === 'bytes') return formatBytes(n);
    if (this.unit === 'files') return `${n} file${n === 1 ? '' : 's'}`;
    return `${n}s`;
  }

  private draw(force: boolean): void {
    if (!this.enabled || !this.timer) return;
    const now = Date.now();
    if (!force && now - this.lastDraw < 80) return;
    this.lastDraw = now;
    const elapsed = `${Math.floor((now - this.started) / 1000)}s`;
    let text: string;
    if (this.total) {
      const ratio = Math.min(1, this.loaded / this.total);
      const filled = Math.round(ratio * WIDTH);
      text = `${this.label} [${'#'.repeat(filled)}${'.'.repeat(WIDTH - filled)}] ${String(Math.floor(ratio * 100)).padStart(3)}% ${this.amount(this.loaded)}/${this.amount(this.total)}`;
    } else {
      this.frame = (this.frame + 1) % FRAMES.length;
      text = `${FRAMES[this.frame]} ${this.label}${this.loaded ? ` ${this.amount(this.loaded)}` : ''} ${elapsed}`;
    }
    const columns = this.stream.columns || 80;
    this.stream.write(`\r\x1b[2K${text.slice(0, columns - 1)}`);
    this.shown = true;
  }
}
