// pino-roll ships no types; this is the part of its API ahma uses.
declare module 'pino-roll' {
  import type { DestinationStream } from 'pino';

  interface RollOptions {
    file: string | (() => string);
    extension?: string;
    frequency?: 'daily' | 'hourly' | number;
    mkdir?: boolean;
    dateFormat?: string;
    size?: string | number;
    limit?: { count?: number; removeOtherLogFiles?: boolean };
  }

  export default function roll(options: RollOptions): Promise<DestinationStream>;
}
