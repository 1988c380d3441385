/**
 * `GET /readyz`: whether the host can serve agents now, and why not. `/healthz` stays liveness (the process answers,
 * nothing is saturated); readiness checks the three things a turn needs: the session store answers a read, the
 * sandbox can start programs, and the `main` model role has an adapter that can send requests.
 *
 * @module
 */
import { Llm, SandboxKey, type Sessions } from "@terret/core";
import type { Context } from "@terret/hames";

/** One check's verdict. */
export interface ReadinessCheck {
  readonly ready: boolean;
  /** Why it is not ready (or a note on a ready one). */
  readonly reason?: string;
}

/** The `/readyz` body. */
export interface Readiness {
  readonly status: "ready" | "not_ready";
  readonly checks: {
    readonly store: ReadinessCheck;
    readonly sandbox: ReadinessCheck;
    readonly model: ReadinessCheck;
  };
}

/** The session id the store probe reads (a head read: nothing is created). */
const PROBE_SESSION = "readyz-probe";

/**
 * Runs the three checks, each bounded by `timeoutMs`.
 *
 * Contract: never throws; a failing or slow dependency is a check with `ready: false` and a reason.
 */
export async function checkReadiness(
  ctx: Context | undefined,
  sessions: Sessions,
  options: { readonly timeoutMs?: number; readonly signal?: AbortSignal } = {},
): Promise<Readiness> {
  const timeout = AbortSignal.timeout(options.timeoutMs ?? 5000);
  const signal = options.signal === undefined
    ? timeout
    : AbortSignal.any([timeout, options.signal]);
  const [store, sandbox] = await Promise.all([
    probe("read the session store", signal, () => sessions.head(PROBE_SESSION, { signal })),
    sandboxCheck(ctx, signal),
  ]);
  const model = modelCheck(ctx);
  const ready = store.ready && sandbox.ready && model.ready;
  return { status: ready ? "ready" : "not_ready", checks: { store, sandbox, model } };
}

async function sandboxCheck(
  ctx: Context | undefined,
  signal: AbortSignal,
): Promise<ReadinessCheck> {
  const sandbox = ctx?.maybe(SandboxKey);
  if (sandbox === undefined) {
    return { ready: true, reason: "no sandbox row is mounted: agents can run no program" };
  }
  return await probe(
    `prepare the ${sandbox.name} sandbox`,
    signal,
    () => sandbox.workspaceReady({ signal }),
  );
}

function modelCheck(ctx: Context | undefined): ReadinessCheck {
  const llm = ctx?.maybe(Llm);
  if (llm === undefined) return { ready: false, reason: "no llm row is mounted" };
  if (llm.resolve("main") === undefined) {
    return { ready: false, reason: 'no model adapter is registered for role "main"' };
  }
  const unavailable = llm.adapter("main").unavailable;
  return unavailable === undefined ? { ready: true } : { ready: false, reason: unavailable };
}

async function probe(
  what: string,
  signal: AbortSignal,
  run: () => Promise<unknown>,
): Promise<ReadinessCheck> {
  try {
    await run();
    return { ready: true };
  } catch (error) {
    if (signal.aborted) return { ready: false, reason: `Cannot ${what}: no answer in time` };
    const name = (error as { code?: unknown }).code;
    // An unknown session is an answer: the store is reachable.
    if (name === "SessionNotFound") return { ready: true };
    return {
      ready: false,
      reason: `Cannot ${what}: ${error instanceof Error ? error.message : String(error)}`,
    };
  }
}
