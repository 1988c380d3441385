/**
 * The JSONL store's `readJson` page: its stored lines framed as they are. Internal to the JSONL store.
 *
 * @module
 */
import type { SessionEvent } from "./envelope.ts";
import { rowCorrupt, storeCorrupt } from "./_store_support.ts";
import type { EventJson } from "./store.ts";

/**
 * The events of one session file from `from` as envelope JSON, stopping at `maxBytes` of JSON (at least one event)
 * or `limit` events. Each complete line is parsed once, to check it is JSON holding its seq; a line that holds the
 * envelope's fields in envelope order (every line the store writes) is returned as it is, any other is serialized
 * from the parsed event, so the text always parses to what `read` returns. A bad line ends the page before it; a
 * page that would start at it throws `StoreCorrupt` naming `store`, the session and the seq.
 */
export function jsonLines(
  bytes: Uint8Array,
  store: string,
  sessionId: string,
  bounds: { readonly from: number; readonly maxBytes: number; readonly limit: number },
): EventJson[] {
  let text: string;
  try {
    text = new TextDecoder("utf-8", { fatal: true }).decode(bytes);
  } catch {
    throw storeCorrupt(store, "it is not valid UTF-8");
  }
  const out: EventJson[] = [];
  let bytesOut = 0;
  let start = 0;
  for (let seq = 1; out.length < bounds.limit && bytesOut < bounds.maxBytes; seq++) {
    const end = text.indexOf("\n", start);
    if (end < 0) break; // the end, or a torn tail
    if (seq >= bounds.from) {
      const line = text.slice(start, end);
      let event: SessionEvent | undefined;
      let why: string | undefined;
      try {
        event = JSON.parse(line) as SessionEvent;
      } catch {
        why = `line ${seq} is not valid JSON`;
      }
      if (why === undefined && event?.seq !== seq) {
        why = `line ${seq} ${
          typeof event?.seq === "number" ? `holds seq ${event.seq}` : "has no seq"
        }`;
      }
      if (why !== undefined) {
        if (out.length > 0) return out;
        throw rowCorrupt(store, sessionId, seq, why);
      }
      const json = canonical(line, event!) ? line : JSON.stringify(event);
      out.push({ seq, json });
      bytesOut += json.length;
    }
    start = end + 1;
  }
  return out;
}

/** True when `line` holds `event`'s envelope fields in envelope order, with no other field and no whitespace. */
function canonical(line: string, event: SessionEvent): boolean {
  if (typeof event !== "object" || event === null) return false;
  const head = `{"id":${JSON.stringify(event.id)},"session_id":${
    JSON.stringify(event.session_id)
  },"seq":${event.seq},"at":${JSON.stringify(event.at)},"type":${
    JSON.stringify(event.type)
  },"payload":`;
  const tail = `,"parent_id":${JSON.stringify(event.parent_id)}}`;
  return line.length > head.length + tail.length && line.startsWith(head) &&
    line.endsWith(tail) && Object.keys(event).length === 7;
}
