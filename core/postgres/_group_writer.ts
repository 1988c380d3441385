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
import { TerretError } from "../errors.ts";
import { envelopeOf, type EventDraft, type SessionEvent } from "../sessions/envelope.ts";
import { sessionExists, sessionNotFound } from "../sessions/_store_support.ts";
import type { Outcome } from "./_async_group.ts";
import { KnownHeads } from "./_known_heads.ts";
import {
  advanceStatement,
  appendStatement,
  arrayLiteral,
  knownStatement,
} from "./_write_statements.ts";

/** A queued append: the draft and, for a fenced append, the lease's token it was made under. */
export interface Append {
  readonly draft: EventDraft;
  readonly token: number | undefined;
}

/** What runs statements: the pool, a reserved connection or a transaction. */
export type Runner = Pick<Sql, "unsafe">;

/**
 * How the heads a commit advanced are notified: each notification is `prefix`, a space, and a JSON array of
 * `[session_id, head]` pairs, and stays under PostgreSQL's payload limit.
 */
export interface Notes {
  /** What each notification starts with (the origin store's id). */
  readonly prefix: string;
  /** The notifications of `heads`. */
  encode(heads: readonly (readonly [string, number])[]): string[];
  /** For each of `ids`, the notification it goes into when a write statement advances it (parts from 0). */
  parts(ids: readonly string[]): number[];
}

/** Writes groups of appends on one connection. */
export class GroupWriter {
  readonly #connect: () => Sql;
  readonly #timeoutMs: number;
  #writer: Sql;
  readonly #s: string;
  readonly #channel: string;
  readonly #notes: Notes;
  readonly #node: string;
  readonly #known = new KnownHeads(KNOWN_HEADS);

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
    this.#s = quotedSchema;
    this.#channel = channel;
    this.#notes = notes;
    this.#node = node;
  }

  /**
   * One group, one transaction, one round trip: the whole group is a single statement committed on its own, so seqs
   * are assigned, heads advanced, events inserted, fences checked and the `NOTIFY` sent under the locks that
   * statement takes. A group of appends to existing sessions, each session's under one token, takes the lean
   * {@linkcode knownStatement} when this writer knows every one of their heads (it committed them last), else
   * {@linkcode advanceStatement}; any other the general {@linkcode appendStatement}. The rare session another writer
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
            ? await this.#statement(writer, batch)
            : batch.every((append) => this.#known.get(append.draft.session_id) !== undefined)
            ? await this.#placeKnown(writer, batch)
            : await this.#advance(writer, batch);
        } catch (error) {
          // Whether it committed is not known when the connection failed: the heads are read again next time.
          for (const append of batch) this.#known.forget(append.draft.session_id);
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
   * Runs {@linkcode knownStatement} for a group {@linkcode lean} accepts whose heads are all known: each append's
   * outcome, or `undefined` for one to run again (the fence held the group back for another session's stale token).
   */
  async #placeKnown(
    writer: Sql,
    appends: readonly Append[],
  ): Promise<(Outcome<SessionEvent> | undefined)[]> {
    const heads = new Map<string, number>();
    const fenced = new Map<string, number>();
    const seqs: string[] = [];
    for (const { draft, token } of appends) {
      const head = (heads.get(draft.session_id) ?? this.#known.get(draft.session_id)!) + 1;
      heads.set(draft.session_id, head);
      seqs.push(String(head));
      if (token !== undefined) fenced.set(draft.session_id, token);
    }
    const drafts = appends.map((append) => append.draft);
    const fencedIds = [...fenced.keys()].sort();
    const rows = await prepared(writer, knownStatement(this.#s), [
      arrayLiteral(drafts.map((d) => d.session_id)),
      arrayLiteral(seqs),
      arrayLiteral(drafts.map((d) => d.id)),
      arrayLiteral(drafts.map((d) => d.at)),
      arrayLiteral(drafts.map((d) => d.type)),
      arrayLiteral(drafts.map((d) => d.parent_id)),
      arrayLiteral(drafts.map((d) => d.payload_json)),
      arrayLiteral(appends.map((a) => a.token === undefined ? null : String(a.token))),
      arrayLiteral(fencedIds),
      arrayLiteral(fencedIds.map((id) => String(fenced.get(id)))),
      this.#node,
      this.#channel,
      arrayLiteral(this.#notes.encode([...heads])),
    ]).values() as unknown as [number, string | null, string | null][];
    const stale = new Map<string, number | undefined>();
    let sent = 0;
    for (const [kind, value, key] of rows) {
      if (kind === 1) stale.set(key!, value === null ? undefined : Number(value));
      else if (kind === 4) sent = Number(value);
    }
    if (stale.size === 0) {
      if (sent === 0) {
        throw new Error("the write statement neither placed the group nor refused it");
      }
      for (const [id, head] of heads) this.#known.set(id, head);
      return appends.map(({ draft }, i) => ({
        ok: true,
        value: envelopeOf(draft, Number(seqs[i])),
      }));
    }
    return appends.map(({ draft, token }): Outcome<SessionEvent> | undefined => {
      if (token === undefined || !stale.has(draft.session_id)) return undefined;
      return { ok: false, error: staleToken(draft.session_id, token, stale.get(draft.session_id)) };
    });
  }

  /** Runs {@linkcode advanceStatement} for a group {@linkcode lean} accepts; each append's outcome. */
  async #advance(writer: Sql, appends: readonly Append[]): Promise<Outcome<SessionEvent>[]> {
    const sessions = new Map<string, { n: number; token: number | undefined }>();
    const ranks: string[] = [];
    for (const { draft, token } of appends) {
      const session = sessions.get(draft.session_id);
      if (session === undefined) sessions.set(draft.session_id, { n: 1, token });
      else session.n++;
      ranks.push(String(session?.n ?? 1));
    }
    const ids = [...sessions.keys()].sort();
    const drafts = appends.map((append) => append.draft);
    const rows = await prepared(writer, advanceStatement(this.#s), [
      arrayLiteral(ids),
      arrayLiteral(ids.map((id) => String(sessions.get(id)!.n))),
      arrayLiteral(ids.map((id) => {
        const token = sessions.get(id)!.token;
        return token === undefined ? null : String(token);
      })),
      arrayLiteral(this.#notes.parts(ids).map(String)),
      arrayLiteral(ids.map((id) => {
        const head = this.#known.get(id);
        return head === undefined ? null : String(head);
      })),
      arrayLiteral(ids.filter((id) => sessions.get(id)!.token !== undefined)),
      arrayLiteral(drafts.map((d) => d.session_id)),
      arrayLiteral(ranks),
      arrayLiteral(drafts.map((d) => d.id)),
      arrayLiteral(drafts.map((d) => d.at)),
      arrayLiteral(drafts.map((d) => d.type)),
      arrayLiteral(drafts.map((d) => d.parent_id)),
      arrayLiteral(drafts.map((d) => d.payload_json)),
      this.#channel,
      this.#notes.prefix,
      this.#node,
    ]).values() as unknown as [number, string | null, string | null][];
    const tokens = new Map<string, number>();
    const bases = new Map<string, number>();
    for (const [kind, value, key] of rows) {
      if (kind === 1) tokens.set(key!, Number(value));
      else if (kind === 2) bases.set(key!, Number(value));
    }
    for (const [id, base] of bases) this.#known.set(id, base + sessions.get(id)!.n);
    return appends.map(({ draft, token }, i): Outcome<SessionEvent> => {
      const base = bases.get(draft.session_id);
      if (base !== undefined) {
        return { ok: true, value: envelopeOf(draft, base + Number(ranks[i])) };
      }
      const current = tokens.get(draft.session_id);
      if (token !== undefined && current !== token) {
        return { ok: false, error: staleToken(draft.session_id, token, current) };
      }
      return { ok: false, error: sessionNotFound(draft.session_id) };
    });
  }

  /**
   * Runs {@linkcode appendStatement} for any group; each append's outcome, or `undefined` for one to run again (its session was created
   * by another writer after the statement's snapshot, so nothing of that session was written).
   */
  async #statement(
    writer: Sql,
    appends: readonly Append[],
  ): Promise<(Outcome<SessionEvent> | undefined)[]> {
    const drafts = appends.map((append) => append.draft);
    const ids = [...new Set(drafts.map((draft) => draft.session_id))].sort();
    const fenced = [
      ...new Set(appends.filter((a) => a.token !== undefined).map((a) => a.draft.session_id)),
    ].sort();
    // The arrays go as array literals made here: postgres.js serializes an array parameter only once it has fetched
    // the server's array types, which a fresh connection's first statement can outrun.
    const rows = await prepared(writer, appendStatement(this.#s), [
      arrayLiteral(drafts.map((d) => d.session_id)),
      arrayLiteral(drafts.map((d) => d.id)),
      arrayLiteral(drafts.map((d) => d.at)),
      arrayLiteral(drafts.map((d) => d.type)),
      arrayLiteral(drafts.map((d) => d.parent_id)),
      arrayLiteral(drafts.map((d) => d.payload_json)),
      arrayLiteral(drafts.map((d) => d.expect)),
      arrayLiteral(appends.map((a) => a.token === undefined ? null : String(a.token))),
      arrayLiteral(fenced),
      arrayLiteral(ids),
      this.#channel,
      this.#notes.prefix,
      arrayLiteral(this.#notes.parts(ids).map(String)),
      this.#node,
    ]).values() as unknown as [number, number | null, string | null, string | null][];
    const seqs = new Map<number, number>();
    const tokens = new Map<string, number>();
    const written = new Set<string>();
    const seen = new Map<string, number>();
    for (const [kind, ord, value, key] of rows) {
      if (kind === 0) seqs.set(Number(ord) - 1, Number(value));
      else if (kind === 1) tokens.set(key!, Number(value));
      else if (kind === 2) written.add(key!);
      else if (kind === 3) seen.set(key!, Number(value));
    }
    // The heads it left are the last seqs it placed; a session it placed nothing on keeps its head unknown.
    for (const id of ids) this.#known.forget(id);
    for (const [i, seq] of seqs) {
      const id = drafts[i]!.session_id;
      if (seq > (this.#known.get(id) ?? 0)) this.#known.set(id, seq);
    }
    const again = new Set<string>();
    // The heads as the statement found them (its snapshot), advanced draft by draft as it did: a draft it placed
    // takes the seq it was given; one it did not is refused here for the reason the statement refused it.
    const heads = new Map(ids.map((id) => [id, seen.get(id) ?? 0]));
    return appends.map(({ draft, token }, i): Outcome<SessionEvent> | undefined => {
      const seq = seqs.get(i);
      if (again.has(draft.session_id)) return undefined;
      if (seq !== undefined) {
        heads.set(draft.session_id, seq);
        return { ok: true, value: envelopeOf(draft, seq) };
      }
      const head = heads.get(draft.session_id)!;
      const current = tokens.get(draft.session_id);
      if (token !== undefined && current !== token) {
        return { ok: false, error: staleToken(draft.session_id, token, current) };
      }
      if (draft.expect === "new" && head > 0) {
        return { ok: false, error: sessionExists(draft.session_id) };
      }
      if (draft.expect === "existing" && head === 0) {
        return { ok: false, error: sessionNotFound(draft.session_id) };
      }
      if (!written.has(draft.session_id)) {
        again.add(draft.session_id);
        return undefined;
      }
      return {
        ok: false,
        error: notPlaced(draft.session_id, new Error("the write statement did not place it")),
      };
    });
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
      `INSERT INTO ${this.#s}.session_events ` +
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
        this.#node,
      ],
    );
  }

  /** `NOTIFY`s the heads a transaction advanced (delivered on commit; ids and seqs only, never payloads). */
  notify(tx: Runner, heads: readonly [string, number][]): Promise<unknown> {
    const messages = this.#notes.encode(heads);
    return prepared(
      tx,
      "SELECT pg_notify($1, m) FROM unnest($2::text[]) AS m",
      [this.#channel, messages],
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

/** `StoreFailed` for a draft of a group that was not placed while others of the group were committed. */
function notPlaced(sessionId: string, error: unknown): TerretError {
  const why = error instanceof Error ? error.message : String(error);
  return new TerretError(
    "StoreFailed",
    `Cannot append to session "${sessionId}" in the PostgreSQL session store: ${why}`,
    { cause: error },
  );
}

/** Whether {@linkcode advanceStatement} can write `appends`: all to existing sessions, each session's under one token. */
function lean(appends: readonly Append[]): boolean {
  const tokens = new Map<string, number | undefined>();
  for (const { draft, token } of appends) {
    if (draft.expect !== "existing") return false;
    if (!tokens.has(draft.session_id)) tokens.set(draft.session_id, token);
    else if (tokens.get(draft.session_id) !== token) return false;
  }
  return true;
}

/**
 * A statement as a named prepared statement (cached per connection): its parameter types are described once per
 * connection rather than before every execution, so pipelined statements cost one round trip together.
 */
export function prepared(
  sql: Runner,
  text: string,
  params: unknown[],
): postgres.PendingQuery<postgres.Row[]> {
  return sql.unsafe(text, params as never[], { prepare: true });
}

/** `StaleFencingToken`: an append under a lease another node has since acquired. */
function staleToken(agentId: string, token: number, current: number | undefined): TerretError {
  return new TerretError(
    "StaleFencingToken",
    `Cannot append to session "${agentId}" under fencing token ${token}: ${
      current === undefined
        ? "no lease was ever granted"
        : `the agent's lease is at token ${current}`
    } (another node holds the agent)`,
    { details: { session_id: agentId, token, current: current ?? null } },
  );
}
