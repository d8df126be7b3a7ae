/**
 * Where the domain reports a failure it handles without failing its caller (a build-log line
 * that could not be written, a result the database did not take): logged with its context,
 * never swallowed. The composition root passes the server's pino logger, which fits as is.
 */
export interface Logger {
  warn(context: Record<string, unknown>, message: string): void;
}
