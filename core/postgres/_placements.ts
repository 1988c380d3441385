/**
 * How the PostgreSQL store places one group of appends, by the write statement the group takes: the writer's known
 * heads ({@linkcode placeKnown}), the heads read in the statement ({@linkcode placeAdvance}), or the general statement
 * for creations and mixed groups ({@linkcode placeGeneral}); each turns the statement's rows into every append's
 * outcome. Internal to the PostgreSQL store.
 *
 * @module
 */
import type postgres from "postgres";
import type { Sql } from "postgres";
import { TerretError } from "../errors.ts";
import { envelopeOf, type EventDraft, type SessionEvent } from "../sessions/envelope.ts";
import { sessionExists, sessionNotFound } from "../sessions/_store_support.ts";
import type { Outcome } from "./_async_group.ts";
import type { KnownHeads } from "./_known_heads.ts";
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

/** Where a group is placed: the writer's known heads, the quoted schema, the `NOTIFY` channel and notes, the node. */
export interface Placement {
  /** The heads this writer committed last (read and advanced by the placements). */
  readonly known: KnownHeads;
  /** The schema, quoted. */
  readonly schema: string;
  /** The `NOTIFY` channel. */
  readonly channel: string;
  /** The notifications of the heads a group advanced. */
  readonly notes: Notes;
  /** This process's node id, stored with every event it appends. */
  readonly node: string;
}

/**
 * Runs {@linkcode knownStatement} for a group of appends to existing sessions, each session's under one token, whose
 * heads this writer all knows: each append's outcome, or `undefined` for one to run again (the fence held the group back for another session's stale token).
 */
export async function placeKnown(
  writer: Runner,
  appends: readonly Append[],
  at: Placement,
): Promise<(Outcome<SessionEvent> | undefined)[]> {
  const heads = new Map<string, number>();
  const fenced = new Map<string, number>();
  const seqs: string[] = [];
  for (const { draft, token } of appends) {
    const head = (heads.get(draft.session_id) ?? at.known.get(draft.session_id)!) + 1;
    heads.set(draft.session_id, head);
    seqs.push(String(head));
    if (token !== undefined) fenced.set(draft.session_id, token);
  }
  const drafts = appends.map((append) => append.draft);
  const fencedIds = [...fenced.keys()].sort();
  const rows = await prepared(writer, knownStatement(at.schema), [
    arrayLiteral(drafts.map((d) => d.session_id)),
    arrayLiteral(seqs),
    ...eventColumns(drafts),
    arrayLiteral(appends.map((a) => a.token === undefined ? null : String(a.token))),
    arrayLiteral(fencedIds),
    arrayLiteral(fencedIds.map((id) => String(fenced.get(id)))),
    at.node,
    at.channel,
    arrayLiteral(at.notes.encode([...heads])),
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
    for (const [id, head] of heads) at.known.set(id, head);
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

/**
 * Runs {@linkcode advanceStatement} for a group of appends to existing sessions, each session's under one token; each
 * append's outcome.
 */
export async function placeAdvance(
  writer: Runner,
  appends: readonly Append[],
  at: Placement,
): Promise<Outcome<SessionEvent>[]> {
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
  const rows = await prepared(writer, advanceStatement(at.schema), [
    arrayLiteral(ids),
    arrayLiteral(ids.map((id) => String(sessions.get(id)!.n))),
    arrayLiteral(ids.map((id) => {
      const token = sessions.get(id)!.token;
      return token === undefined ? null : String(token);
    })),
    arrayLiteral(at.notes.parts(ids).map(String)),
    arrayLiteral(ids.map((id) => {
      const head = at.known.get(id);
      return head === undefined ? null : String(head);
    })),
    arrayLiteral(ids.filter((id) => sessions.get(id)!.token !== undefined)),
    arrayLiteral(drafts.map((d) => d.session_id)),
    arrayLiteral(ranks),
    ...eventColumns(drafts),
    at.channel,
    at.notes.prefix,
    at.node,
  ]).values() as unknown as [number, string | null, string | null][];
  const tokens = new Map<string, number>();
  const bases = new Map<string, number>();
  for (const [kind, value, key] of rows) {
    if (kind === 1) tokens.set(key!, Number(value));
    else if (kind === 2) bases.set(key!, Number(value));
  }
  for (const [id, base] of bases) at.known.set(id, base + sessions.get(id)!.n);
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
export async function placeGeneral(
  writer: Runner,
  appends: readonly Append[],
  at: Placement,
): Promise<(Outcome<SessionEvent> | undefined)[]> {
  const drafts = appends.map((append) => append.draft);
  const ids = [...new Set(drafts.map((draft) => draft.session_id))].sort();
  const fenced = [
    ...new Set(appends.filter((a) => a.token !== undefined).map((a) => a.draft.session_id)),
  ].sort();
  // The arrays go as array literals made here: postgres.js serializes an array parameter only once it has fetched
  // the server's array types, which a fresh connection's first statement can outrun.
  const rows = await prepared(writer, appendStatement(at.schema), [
    arrayLiteral(drafts.map((d) => d.session_id)),
    ...eventColumns(drafts),
    arrayLiteral(drafts.map((d) => d.expect)),
    arrayLiteral(appends.map((a) => a.token === undefined ? null : String(a.token))),
    arrayLiteral(fenced),
    arrayLiteral(ids),
    at.channel,
    at.notes.prefix,
    arrayLiteral(at.notes.parts(ids).map(String)),
    at.node,
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
  for (const id of ids) at.known.forget(id);
  for (const [i, seq] of seqs) {
    const id = drafts[i]!.session_id;
    if (seq > (at.known.get(id) ?? 0)) at.known.set(id, seq);
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

/** The drafts' ids, times, types, parent ids and payload texts, each as an array literal: the columns every write
 * statement takes in that order. */
function eventColumns(drafts: readonly EventDraft[]): string[] {
  return [
    arrayLiteral(drafts.map((d) => d.id)),
    arrayLiteral(drafts.map((d) => d.at)),
    arrayLiteral(drafts.map((d) => d.type)),
    arrayLiteral(drafts.map((d) => d.parent_id)),
    arrayLiteral(drafts.map((d) => d.payload_json)),
  ];
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

/** `StoreFailed` for a draft of a group that was not placed while others of the group were committed. */
export function notPlaced(sessionId: string, error: unknown): TerretError {
  const why = error instanceof Error ? error.message : String(error);
  return new TerretError(
    "StoreFailed",
    `Cannot append to session "${sessionId}" in the PostgreSQL session store: ${why}`,
    { cause: error },
  );
}
