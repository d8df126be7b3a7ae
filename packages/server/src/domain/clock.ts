/** Timestamps are stored as ISO 8601 UTC with milliseconds, which sort as text. */
export type Clock = () => Date;
export const systemClock: Clock = () => new Date();
export const isoNow = (clock: Clock) => clock().toISOString();
