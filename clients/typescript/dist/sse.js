// Server-Sent Events, parsed from decoded text as it arrives.
/** Bound on one line of a stream (an execution holds up to 16 MiB of each output stream, escaped). */
export const MAX_LINE = 128 << 20;
/** Feeds text to the parser and returns the events it completes; comments and unknown fields are skipped, as the format says. */
export class SSEParser {
    buf = "";
    event = "";
    id;
    data = [];
    feed(text) {
        this.buf += text;
        const out = [];
        let start = 0;
        for (;;) {
            const i = this.buf.indexOf("\n", start);
            if (i < 0)
                break;
            let line = this.buf.slice(start, i);
            if (line.endsWith("\r"))
                line = line.slice(0, -1);
            start = i + 1;
            const ev = this.line(line);
            if (ev)
                out.push(ev);
        }
        this.buf = this.buf.slice(start);
        if (this.buf.length > MAX_LINE)
            throw new Error(`event stream line longer than ${MAX_LINE} characters`);
        return out;
    }
    line(line) {
        if (line === "") {
            if (this.data.length === 0) {
                this.event = "";
                return undefined;
            }
            const ev = { event: this.event || "message", id: this.id, data: this.data.join("\n") };
            this.event = "";
            this.data = [];
            return ev;
        }
        if (line.startsWith(":"))
            return undefined;
        const colon = line.indexOf(":");
        const name = colon < 0 ? line : line.slice(0, colon);
        let value = colon < 0 ? "" : line.slice(colon + 1);
        if (value.startsWith(" "))
            value = value.slice(1);
        if (name === "event")
            this.event = value;
        else if (name === "data")
            this.data.push(value);
        else if (name === "id" && !value.includes("\0"))
            this.id = value;
        return undefined;
    }
}
