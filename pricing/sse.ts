/**
 * A minimal server-sent events reader (the WHATWG event-stream format): enough for Hermes' price
 * stream, with no dependency. Lines end in \n, \r\n or \r; `data:` lines of one event are joined with
 * \n; a line starting with ":" is a comment (keep-alive); a blank line dispatches the event.
 */

export interface SseEvent {
  event: string;
  data: string;
  id?: string;
}

/** Yields each event of a response body as it arrives. */
export async function* readSse(body: AsyncIterable<Uint8Array>): AsyncGenerator<SseEvent> {
  const decoder = new TextDecoder();
  let buffer = "";
  let data: string[] = [];
  let event = "";
  let id: string | undefined;
  for await (const chunk of body) {
    buffer += decoder.decode(chunk, { stream: true });
    let start = 0;
    for (;;) {
      const m = /\r\n|\r|\n/.exec(buffer.slice(start));
      if (!m) break;
      // A lone \r at the very end may be the first half of \r\n: wait for the next chunk.
      if (m[0] === "\r" && start + m.index + 1 === buffer.length) break;
      const line = buffer.slice(start, start + m.index);
      start += m.index + m[0].length;
      if (line === "") {
        if (data.length) yield { event: event || "message", data: data.join("\n"), ...(id ? { id } : {}) };
        data = [];
        event = "";
        continue;
      }
      if (line.startsWith(":")) continue;
      const colon = line.indexOf(":");
      const field = colon === -1 ? line : line.slice(0, colon);
      let value = colon === -1 ? "" : line.slice(colon + 1);
      if (value.startsWith(" ")) value = value.slice(1);
      if (field === "data") data.push(value);
      else if (field === "event") event = value;
      else if (field === "id") id = value;
    }
    buffer = buffer.slice(start);
  }
}
