/**
 * Fleet nodes for the PostgreSQL tests: the patch that makes a `trt serve` a node of a fleet on one database (the
 * PostgreSQL store row with a node id and lease ttl, a workspace, no sandbox, the fake OpenRouter as the model, no
 * titles, a socket on a free port with one shared token), the store's rows as appended (with the node and fencing
 * token of each), and the check that a session's log shows one writer per fencing token, tokens never going back.
 *
 * @module
 */
import assert from "node:assert/strict";
import postgres from "postgres";

/** How one node is configured. */
export interface NodeOptions {
  /** The database URL every node shares. */
  readonly url: string;
  /** The node id (`node_id` of the store row). */
  readonly node: string;
  /** The fake OpenRouter's URL. */
  readonly model: string;
  /** The socket token every node accepts. */
  readonly token: string;
  /** The workspace directory (shared storage: the same path on every node). */
  readonly workspace: string;
  /** The store row's `lease_ttl_seconds` (default: the row's own). */
  readonly leaseTtlSeconds?: number;
  /** Tools allowed without approval (default none). */
  readonly allow?: readonly string[];
}

/** Writes the node's patch into `dir` (creating the workspace when missing) and returns its path. */
export async function nodePatch(dir: string, options: NodeOptions): Promise<string> {
  await Deno.mkdir(options.workspace, { recursive: true });
  const ttl = options.leaseTtlSeconds === undefined
    ? ""
    : `, lease_ttl_seconds: ${options.leaseTtlSeconds}`;
  const path = `${dir}/node.yml`;
  await Deno.writeTextFile(
    path,
    [
      "rows:",
      "  - id: sessions.store",
      "    plugin: terret-store-postgres",
      `    config: { url: "${options.url}", node_id: ${options.node}${ttl} }`,
      "  - id: workspace",
      `    config: { dirs: [${options.workspace}] }`,
      "  - id: sandbox",
      "    plugin: sandbox-none",
      "    config: { acknowledge_unsandboxed: true }",
      "  - id: llm.main",
      `    config: { model: test/model, base_url: ${options.model}, api_key: sk-test, max_retries: 0 }`,
      ...(options.allow === undefined || options.allow.length === 0 ? [] : [
        "  - id: tools.allow",
        `    config: { allow: [${options.allow.join(", ")}] }`,
      ]),
      "  - id: titles",
      "    config: { auto: false }",
      "  - id: interfaces.ws",
      `    config: { port: 0, tokens: [{ token: ${options.token}, agents: ["*"] }] }`,
      "",
    ].join("\n"),
  );
  return path;
}

/** One stored event as the store wrote it: who appended it, under which fencing token. */
export interface WrittenRow {
  readonly session_id: string;
  readonly seq: number;
  readonly type: string;
  /** The node that appended it. */
  readonly node: string;
  /** The fencing token it was appended under; `null` for an unfenced append (input made durable by any node). */
  readonly fencing_token: number | null;
}

/** Every stored event of `sessions` (all when omitted), in session then seq order, read on a fresh connection. */
export async function writtenRows(
  url: string,
  sessions?: readonly string[],
  schema = "terret",
): Promise<WrittenRow[]> {
  const sql = postgres(url, { max: 1, onnotice: () => {} });
  try {
    const rows = await sql.unsafe(
      `SELECT session_id, seq::int AS seq, type, node, fencing_token::int AS fencing_token ` +
        `FROM "${schema}".session_events WHERE $1::text[] IS NULL OR session_id = ANY($1::text[]) ` +
        "ORDER BY session_id, seq",
      [sessions === undefined ? null : [...sessions]] as never[],
    );
    return rows.map((row) => ({
      session_id: row.session_id,
      seq: row.seq,
      type: row.type,
      node: row.node,
      fencing_token: row.fencing_token,
    }));
  } finally {
    await sql.end({ timeout: 5 });
  }
}

/** What {@linkcode assertOneWriterAtATime} found in one session: its fencing tokens in order, each with its node. */
export type Writers = readonly { readonly token: number; readonly node: string }[];

/**
 * Asserts, from one session's stored rows (in seq order), that seqs run 1, 2, … with no gap or duplicate, that every
 * fenced append of a token came from one node, and that tokens never go back: once an append under token `t` is
 * stored, no later seq carries a token below `t` (no two nodes appended under different tokens at the same time).
 * Unfenced rows may only be input made durable (`input/queued`) or the session's creation. Returns the writers.
 */
export function assertOneWriterAtATime(rows: readonly WrittenRow[]): Writers {
  const id = rows[0]?.session_id;
  assert.deepStrictEqual(rows.map((row) => row.seq), rows.map((_, i) => i + 1), `seqs of "${id}"`);
  const writers: { token: number; node: string }[] = [];
  for (const row of rows) {
    if (row.fencing_token === null) {
      assert.ok(
        row.type === "input/queued" || row.type === "session/created",
        `"${id}" seq ${row.seq} (${row.type}) was appended unfenced by "${row.node}"`,
      );
      continue;
    }
    const last = writers.at(-1);
    if (last === undefined || row.fencing_token > last.token) {
      writers.push({ token: row.fencing_token, node: row.node });
      continue;
    }
    assert.equal(
      row.fencing_token,
      last.token,
      `"${id}" seq ${row.seq} was appended by "${row.node}" under token ${row.fencing_token} after token ` +
        `${last.token} of "${last.node}"`,
    );
    assert.equal(
      row.node,
      last.node,
      `"${id}" seq ${row.seq}: token ${row.fencing_token} used by "${row.node}" and "${last.node}"`,
    );
  }
  return writers;
}
