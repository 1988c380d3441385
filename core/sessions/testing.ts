/**
 * Test helpers for code that reads session logs.
 *
 * @module
 */
import type { Sessions } from "./sessions.ts";
import type { StoreReadOptions } from "./store.ts";

/** One read {@linkcode recordReads} saw: the session and the seq range asked for (`to` is `Infinity` up to the head). */
export interface RecordedRead {
  readonly session_id: string;
  readonly from: number;
  readonly to: number;
  readonly types: readonly string[] | undefined;
}

/**
 * `sessions` with every `read` recorded, in call order, before it is passed on; everything else is the object's own
 * (methods bound to it, so private state still works). For tests that prove what a reader reads.
 *
 * @example
 * ```ts
 * import { createContext } from "@terret/hames";
 * import { MemorySessionStore } from "@terret/core/sessions";
 * import { SessionLog } from "@terret/core";
 * import { recordReads } from "@terret/core/testing";
 * await using ctx = createContext({ mode: "test" });
 * const { sessions, reads } = recordReads(new SessionLog(ctx, new MemorySessionStore()));
 * await sessions.read("s", { from_seq: 5 });
 * console.log(reads); // [{ session_id: "s", from: 5, to: Infinity, types: undefined }]
 * ```
 */
export function recordReads<S extends Pick<Sessions, "read">>(
  sessions: S,
): { sessions: S; reads: RecordedRead[] } {
  const reads: RecordedRead[] = [];
  const recorded = new Proxy(sessions, {
    get(target, key) {
      if (key === "read") {
        return (id: string, options: StoreReadOptions = {}) => {
          reads.push({
            session_id: id,
            from: options.from_seq ?? 1,
            to: options.to_seq ?? Infinity,
            types: options.types,
          });
          return target.read(id, options);
        };
      }
      const value = Reflect.get(target, key, target);
      return typeof value === "function" ? value.bind(target) : value;
    },
  });
  return { sessions: recorded, reads };
}
