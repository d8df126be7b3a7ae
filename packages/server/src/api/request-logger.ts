/**
 * Each request's logger, made only when the request logs something. Fastify gives every
 * request a child of the server's logger bound to its request id; pino serializes the bindings
 * when the child is made, which on a warm call costs more than anything the request then logs
 * (nothing, unless it fails or ALGOHOST_LOG_LEVEL=debug asks for request lines).
 */
import type { FastifyBaseLogger } from 'fastify';
import type { Bindings, ChildLoggerOptions } from 'pino';

/** pino's log methods are overloaded; the lazy logger passes its arguments through unchanged. */
const call = (fn: FastifyBaseLogger['info'], logger: FastifyBaseLogger, args: unknown[]) =>
  (fn as (...a: unknown[]) => void).apply(logger, args);

export class LazyRequestLogger {
  private made: FastifyBaseLogger | undefined;

  constructor(
    private readonly parent: FastifyBaseLogger,
    private readonly bindings: Bindings,
    private readonly options: ChildLoggerOptions,
  ) {}

  private get logger(): FastifyBaseLogger {
    return (this.made ??= this.parent.child(this.bindings, this.options));
  }

  get level(): string {
    return this.made?.level ?? this.parent.level;
  }
  set level(level: string) {
    this.logger.level = level;
  }

  fatal(...args: unknown[]): void {
    call(this.logger.fatal, this.logger, args);
  }
  error(...args: unknown[]): void {
    call(this.logger.error, this.logger, args);
  }
  warn(...args: unknown[]): void {
    call(this.logger.warn, this.logger, args);
  }
  info(...args: unknown[]): void {
    call(this.logger.info, this.logger, args);
  }
  debug(...args: unknown[]): void {
    call(this.logger.debug, this.logger, args);
  }
  trace(...args: unknown[]): void {
    call(this.logger.trace, this.logger, args);
  }
  silent(): void {}

  child(bindings: Bindings, options?: ChildLoggerOptions): FastifyBaseLogger {
    return this.logger.child(bindings, options);
  }
}

/** Fastify's `childLoggerFactory`: a lazy child per request. */
export function lazyChildLogger(logger: FastifyBaseLogger, bindings: Bindings, options: ChildLoggerOptions): FastifyBaseLogger {
  return new LazyRequestLogger(logger, bindings, options) as unknown as FastifyBaseLogger;
}
