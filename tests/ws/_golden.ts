/**
 * Golden files for event streams (`tests/golden/ws/<name>.jsonl`): one frame per line, normalised so ids and
 * timestamps do not matter and everything else does. `UPDATE_GOLDEN=1 deno test -A tests/ws/` rewrites them.
 *
 * @module
 */
import assert from "node:assert/strict";

const GOLDEN_DIR = new URL("../golden/ws/", import.meta.url);
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
const ISO = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?Z$/;

/**
 * Normalises frames: every UUID becomes `<id:N>` and every `session_id` `<session:N>` (numbered by first
 * appearance, so equal ids stay equal), and every ISO timestamp `<at>`.
 */
export function normalizeFrames(frames: readonly unknown[]): string[] {
  const ids = new Map<string, string>();
  const sessions = new Map<string, string>();
  const walk = (value: unknown, key: string | undefined): unknown => {
    if (typeof value === "string") {
      if (key === "session_id") {
        if (!sessions.has(value)) sessions.set(value, `<session:${sessions.size + 1}>`);
        return sessions.get(value);
      }
      if (UUID.test(value)) {
        if (!ids.has(value)) ids.set(value, `<id:${ids.size + 1}>`);
        return ids.get(value);
      }
      if (ISO.test(value)) return "<at>";
      return value;
    }
    if (Array.isArray(value)) return value.map((item) => walk(item, undefined));
    if (typeof value === "object" && value !== null) {
      return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, walk(v, k)]));
    }
    return value;
  };
  return frames.map((frame) => JSON.stringify(walk(frame, undefined)));
}

/** Asserts that `frames`, normalised, equal the golden file `name` (or writes it under `UPDATE_GOLDEN=1`). */
export async function assertGolden(name: string, frames: readonly unknown[]): Promise<void> {
  const lines = normalizeFrames(frames);
  const file = new URL(`${name}.jsonl`, GOLDEN_DIR);
  if (Deno.env.get("UPDATE_GOLDEN") === "1") {
    await Deno.mkdir(GOLDEN_DIR, { recursive: true });
    await Deno.writeTextFile(file, `${lines.join("\n")}\n`);
    return;
  }
  const expected = (await Deno.readTextFile(file)).split("\n").filter((line) => line !== "");
  assert.deepStrictEqual(lines, expected, `the frames differ from tests/golden/ws/${name}.jsonl`);
}
