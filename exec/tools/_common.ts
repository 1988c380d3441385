/**
 * Helpers the standard tools share: path checks written for the model, seam lookup through the calling agent's
 * context, and small text utilities. Internal to `@terret/exec`.
 *
 * @module
 */
import type { Context, ServiceKey } from "@terret/hames";
import { TerretError } from "../errors.ts";
import { isAbsolute } from "node:path";

/** The seam `key` as the calling agent sees it (a fork may shadow it), or a model-facing error. */
export function seam<T>(ctx: Context, key: ServiceKey<T>, tool: string): T {
  const service = ctx.maybe(key);
  if (service === undefined) {
    throw new TerretError(
      "ServiceMissing",
      `${tool} is unavailable: the "${key.key}" service is not mounted in this harness`,
    );
  }
  return service;
}

/** Refuses a relative path with a message that tells the model what to send instead. */
export function requireAbsolute(path: string, field: string, dirs: readonly string[]): void {
  if (!isAbsolute(path)) {
    throw new TypeError(
      `${field} must be an absolute path, got ${JSON.stringify(path)} (the workspace is ${
        dirs.length === 0 ? "empty" : dirs.join(", ")
      })`,
    );
  }
}

/** Adds the workspace to a `Denied` error's message, so the model knows where it may work. */
export function explainDenied(error: unknown, dirs: readonly string[]): never {
  if (error instanceof TerretError && error.code === "Denied") {
    throw new TerretError(
      "Denied",
      `${error.message} (the granted workspace is ${
        dirs.length === 0 ? "empty" : dirs.join(", ")
      })`,
      { cause: error },
    );
  }
  throw error;
}

/** "1 line" / "2 lines". */
export function plural(count: number, noun: string): string {
  return `${count} ${noun}${count === 1 ? "" : "s"}`;
}

/** Base64 of bytes (chunked, so large images do not overflow the argument limit). */
export function base64(bytes: Uint8Array): string {
  let binary = "";
  for (let i = 0; i < bytes.length; i += 0x8000) {
    binary += String.fromCharCode(...bytes.subarray(i, i + 0x8000));
  }
  return btoa(binary);
}
