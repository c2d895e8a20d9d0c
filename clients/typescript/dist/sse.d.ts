/** One event: its name ("message" when unnamed), its id if any, and its data lines joined. */
export interface RawEvent {
    event: string;
    id: string | undefined;
    data: string;
}
/** Bound on one line of a stream (an execution holds up to 16 MiB of each output stream, escaped). */
export declare const MAX_LINE: number;
/** Feeds text to the parser and returns the events it completes; comments and unknown fields are skipped, as the format says. */
export declare class SSEParser {
    private buf;
    private event;
    private id;
    private data;
    feed(text: string): RawEvent[];
    private line;
}
