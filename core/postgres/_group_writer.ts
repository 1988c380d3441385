/**
 * The PostgreSQL store's write path: one group commit as one statement (its own transaction, one round trip) on the
 * writer connection, fenced appends checked against the agents' lease tokens inside it, and the `NOTIFY` of the heads
 * advanced.
 * Internal to the PostgreSQL store.
 *
 * @module
 */
import type postgres from "postgres";
import type { Sql } from "postgres";
import type { SessionEvent } from "../sessions/envelope.ts";
import type { Outcome } from "./_async_group.ts";
import { KnownHeads } from "./_known_heads.ts";
import {
  type Append,
  type Notes,
  notPlaced,
  placeAdvance,
  placeGeneral,
  placeKnown,
  type Placement,
  prepared,
  type Runner,
} from "./_placements.ts";

export type { Append, Notes, Runner };
export { prepared };

/** Writes groups of appends on one connection. */
export class GroupWriter {
  readonly #connect: () => Sql;
  readonly #timeoutMs: number;
  #writer: Sql;
  readonly #at: Placement;

  /**
   * @param connect makes a client of one connection (`max: 1`), so `BEGIN` and `COMMIT` frame the statements between
   *   them; called again to replace a client a group commit gave up on
   * @param timeoutMs how long a group commit may wait for PostgreSQL (a query for a connection that cannot be made
   *   waits for one), after which its client is destroyed (rejecting what it holds) and replaced
   * @param quotedSchema the schema, quoted
   * @param channel the `NOTIFY` channel
   * @param notes the notifications of the heads a group advanced
   * @param node this process's node id, stored with every event it appends (with the append's fencing token)
   */
  constructor(
    connect: () => Sql,
    timeoutMs: number,
    quotedSchema: string,
    channel: string,
    notes: Notes,
    node: string,
  ) {
    this.#connect = connect;
    this.#timeoutMs = timeoutMs;
    this.#writer = connect();
    this.#at = {
      known: new KnownHeads(KNOWN_HEADS),
      schema: quotedSchema,
      channel,
      notes,
      node,
    };
  }

  /**
   * One group, one transaction, one round trip: the whole group is a single statement committed on its own, so seqs
   * are assigned, heads advanced, events inserted, fences checked and the `NOTIFY` sent under the locks that
   * statement takes. A group of appends to existing sessions, each session's under one token, takes the lean
   * {@linkcode placeKnown} when this writer knows every one of their heads (it committed them last), else
   * {@linkcode placeAdvance}; any other {@linkcode placeGeneral}. The rare session another writer
   * created after the statement's snapshot (its "new" draft raced a creation) is written by a second statement,
   * which sees it; a statement PostgreSQL aborted as a deadlock victim, or because a head it used was stale (another
   * writer appended: a seq collided on `UNIQUE (session_id, seq)`), wrote nothing and runs again, reading the heads.
   */
  async commit(
    appends: readonly Append[],
  ): Promise<{ outcomes: Outcome<SessionEvent>[]; committed: SessionEvent[] }> {
    const writer = this.#writer;
    let expired = false;
    const timer = setTimeout(() => {
      expired = true;
      if (this.#writer === writer) this.#writer = this.#connect();
      void writer.end({ timeout: 0 }).catch(() => {});
    }, this.#timeoutMs);
    try {
      const outcomes: Outcome<SessionEvent>[] = [];
      const committed: SessionEvent[] = [];
      let pending = appends.map((append, index) => ({ append, index }));
      let deadlocks = 0;
      let collisions = 0;
      for (let pass = 0; pending.length > 0; pass++) {
        const batch = pending.map((p) => p.append);
        let round: (Outcome<SessionEvent> | undefined)[];
        try {
          if (pass >= MAX_PASSES) {
            throw new Error(`the drafts were not placed in ${pass} statements`);
          }
          round = !lean(batch)
            ? await placeGeneral(writer, batch, this.#at)
            : batch.every((append) => this.#at.known.get(append.draft.session_id) !== undefined)
            ? await placeKnown(writer, batch, this.#at)
            : await placeAdvance(writer, batch, this.#at);
        } catch (error) {
          // Whether it committed is not known when the connection failed: the heads are read again next time.
          for (const append of batch) this.#at.known.forget(append.draft.session_id);
          const code = (error as { code?: unknown }).code;
          if (code === "23505" && ++collisions <= MAX_COLLISIONS) {
            pass--;
            continue;
          }
          if (code === "40P01" && ++deadlocks <= MAX_DEADLOCKS) {
            pass--;
            continue;
          }
          if (pass === 0) throw error;
          // An earlier statement committed: only the drafts it left fail.
          for (const { append, index } of pending) {
            outcomes[index] = { ok: false, error: notPlaced(append.draft.session_id, error) };
          }
          break;
        }
        round.forEach((outcome, i) => {
          if (outcome === undefined) return;
          outcomes[pending[i]!.index] = outcome;
          if (outcome.ok) committed.push(outcome.value);
        });
        pending = pending.filter((_, i) => round[i] === undefined);
      }
      return { outcomes, committed };
    } catch (error) {
      if (!expired) throw error;
      throw new Error(`PostgreSQL did not answer within ${this.#timeoutMs} ms`, { cause: error });
    } finally {
      clearTimeout(timer);
    }
  }

  /** Closes the writer connection. */
  end(): Promise<void> {
    return this.#writer.end({ timeout: 5 });
  }

  /**
   * Inserts events in one statement (arrays unnested server-side), unfenced, recording this node as their writer.
   */
  insert(
    tx: Runner,
    events: readonly SessionEvent[],
    payloads: readonly string[],
  ): postgres.PendingQuery<postgres.Row[]> {
    return prepared(
      tx,
      `INSERT INTO ${this.#at.schema}.session_events ` +
        "(session_id, seq, id, at, type, parent_id, payload, node, fencing_token) " +
        "SELECT session_id, seq, id, at, type, parent_id, payload::json, $8::text, NULL " +
        "FROM unnest($1::text[], $2::bigint[], $3::text[], $4::text[], $5::text[], $6::text[], $7::text[]) " +
        "AS v(session_id, seq, id, at, type, parent_id, payload)",
      [
        events.map((e) => e.session_id),
        events.map((e) => e.seq),
        events.map((e) => e.id),
        events.map((e) => e.at),
        events.map((e) => e.type),
        events.map((e) => e.parent_id),
        payloads as string[],
        this.#at.node,
      ],
    );
  }

  /** `NOTIFY`s the heads a transaction advanced (delivered on commit; ids and seqs only, never payloads). */
  notify(tx: Runner, heads: readonly [string, number][]): Promise<unknown> {
    const messages = this.#at.notes.encode(heads);
    return prepared(
      tx,
      "SELECT pg_notify($1, m) FROM unnest($2::text[]) AS m",
      [this.#at.channel, messages],
    );
  }
}

/** How often a group is run again after PostgreSQL chose it as a deadlock victim (it wrote nothing). */
const MAX_DEADLOCKS = 3;

/**
 * How often a group is run again after a seq it placed collided with another writer's (it wrote nothing; the heads
 * are read again, so it collides again only if yet another append to one of its sessions committed meanwhile).
 */
const MAX_COLLISIONS = 20;

/** How many sessions' heads a writer remembers (the most recently written). */
const KNOWN_HEADS = 10_000;

/** The most statements one group takes (a create racing another writer's takes two). */
const MAX_PASSES = 3;

/**
 * Whether {@linkcode placeKnown} or {@linkcode placeAdvance} can write `appends`: all to existing sessions, each
 * session's under one token.
 */
function lean(appends: readonly Append[]): boolean {
  const tokens = new Map<string, number | undefined>();
  for (const { draft, token } of appends) {
    if (draft.expect !== "existing") return false;
    if (!tokens.has(draft.session_id)) tokens.set(draft.session_id, token);
    else if (tokens.get(draft.session_id) !== token) return false;
  }
  return true;
}
