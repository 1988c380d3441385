/**
 * The loader: mounts config rows `{id, plugin, config, disabled}` in order and reconfigures them by id.
 *
 * @module
 */
import type { Context } from "./context.ts";
import { TerretError } from "./hames_errors.ts";
import type { Fiber } from "./fiber.ts";
import { type PluginLike, pluginName, pluginProvides } from "./plugin.ts";
import { defineService, type ServiceKey } from "./service_key.ts";

/** One config row, its plugin already resolved to code. */
export interface Row {
  /** Stable id that patches, `reconfigure` and errors refer to (`"llm.main"`). */
  readonly id: string;
  /** The plugin to mount. */
  readonly plugin: PluginLike;
  /** The row's config, validated against the plugin's schema. */
  readonly config?: unknown;
  /** A disabled row is kept but not mounted. */
  readonly disabled?: boolean;
  /** Keys this row's subtree gets its own instance of. */
  readonly isolate?: readonly string[];
}

/** The loader service key; the loader provides itself so interfaces can reconfigure rows. */
export const LoaderKey: ServiceKey<Loader> = defineService<Loader>(
  "loader",
  "Mounts config rows and reconfigures them by id",
);

/**
 * Mounts config rows on a context and reconfigures them.
 *
 * Contract: `load` mounts every enabled row in order, waits until the tree is idle, then refuses to finish while
 * any row failed or is still parked, naming the row and the reason (a dependency cycle is printed as a cycle).
 *
 * @example
 * ```ts
 * import { createContext, definePlugin, Loader } from "@terret/hames";
 * await using ctx = createContext();
 * const hello = definePlugin({ name: "hello", apply() {} });
 * const loader = new Loader(ctx);
 * await loader.load([{ id: "hello", plugin: hello }]);
 * console.log(loader.fiber("hello")?.state); // "active"
 * ```
 */
export class Loader {
  readonly #ctx: Context;
  readonly #rows = new Map<string, Row>();
  readonly #fibers = new Map<string, Fiber>();

  /** @param ctx the context rows are mounted on (the loader's registrations are its effects) */
  constructor(ctx: Context) {
    this.#ctx = ctx;
  }

  /**
   * Mounts `rows` and waits for the tree to settle.
   *
   * @throws {TerretError} `BootFailed` naming a failed row, `ServiceMissing` for a row waiting on a service no row
   *   provides, `DependencyCycle` printing the cycle, `ConfigInvalid` for a row whose config fails its schema,
   *   `RowConflict` for a duplicate id
   */
  async load(rows: readonly Row[]): Promise<void> {
    for (const row of rows) this.#mount(row);
    await this.#ctx.idle();
    this.check();
  }

  /** The rows known to the loader, in load order. */
  rows(): Row[] {
    return [...this.#rows.values()];
  }

  /** How many rows the loader knows (`rows().length`, without copying them). */
  get size(): number {
    return this.#rows.size;
  }

  /** The fiber mounted for a row id, if the row is enabled. */
  fiber(id: string): Fiber | undefined {
    return this.#fibers.get(id);
  }

  /**
   * Replaces a row's config wholesale, atomically: on failure the row keeps its old config and no
   * `config/updated` is emitted.
   *
   * @throws {TerretError} `RowNotFound`, `ConfigInvalid`, or what the service's hook or restart threw
   */
  async reconfigure(id: string, config: unknown): Promise<void> {
    const row = this.#rows.get(id);
    if (row === undefined) {
      throw new TerretError("RowNotFound", `Cannot reconfigure row "${id}": no such row`);
    }
    const fiber = this.#fibers.get(id);
    if (fiber !== undefined) await fiber.reconfigure(config);
    this.#rows.set(id, { ...row, config });
    if (fiber === undefined) return;
    await this.#ctx.idle();
  }

  /** Throws when any mounted row failed or is parked (see {@linkcode Loader.load}). */
  check(): void {
    for (const [id, fiber] of this.#fibers) {
      if (fiber.state === "failed") {
        const reason = fiber.error instanceof Error ? fiber.error.message : String(fiber.error);
        throw new TerretError("BootFailed", `Cannot boot: row "${id}" failed to start: ${reason}`, {
          cause: fiber.error,
          details: { row: id },
        });
      }
    }
    const parked = [...this.#fibers.values()].filter((fiber) => fiber.state === "pending");
    if (parked.length === 0) return;
    const cycle = findCycle(parked);
    if (cycle !== undefined) {
      throw new TerretError("DependencyCycle", `Cannot boot: dependency cycle: ${cycle}`, {
        details: { rows: parked.map((fiber) => fiber.id) },
      });
    }
    const first = parked[0]!;
    const missing = first.missing();
    throw new TerretError(
      "ServiceMissing",
      `Cannot boot: row "${first.id}" waits for ${
        missing.map((key) => `"${key}"`).join(", ")
      }, which no row provides`,
      { details: { row: first.id, missing } },
    );
  }

  #mount(row: Row): void {
    if (this.#rows.has(row.id)) {
      throw new TerretError(
        "RowConflict",
        `Cannot load row "${row.id}": a row with this id is already loaded`,
      );
    }
    this.#rows.set(row.id, row);
    if (row.disabled === true) return;
    const options = row.isolate === undefined
      ? { id: row.id }
      : { id: row.id, isolate: row.isolate };
    const fiber = this.#ctx.plugin(row.plugin, row.config, options);
    this.#fibers.set(row.id, fiber);
  }
}

/** Describes the first dependency cycle among parked fibers, e.g. `a (needs "x") -> b (needs "y") -> a`. */
function findCycle(parked: readonly Fiber[]): string | undefined {
  const providers = new Map<string, Fiber>();
  for (const fiber of parked) {
    for (const key of pluginProvides(fiber.plugin)) providers.set(key.key, fiber);
  }
  const done = new Set<Fiber>();
  const path: { fiber: Fiber; key: string }[] = [];
  const onPath = new Set<Fiber>();
  const visit = (fiber: Fiber): string | undefined => {
    if (onPath.has(fiber)) {
      const loop = path.slice(path.findIndex((step) => step.fiber === fiber));
      return [...loop.map((step) => `${step.fiber.id} (needs "${step.key}")`), fiber.id].join(
        " -> ",
      );
    }
    if (done.has(fiber)) return undefined;
    onPath.add(fiber);
    for (const key of fiber.missing()) {
      const to = providers.get(key);
      if (to === undefined) continue;
      path.push({ fiber, key });
      const found = visit(to);
      if (found !== undefined) return found;
      path.pop();
    }
    onPath.delete(fiber);
    done.add(fiber);
    return undefined;
  };
  for (const fiber of parked) {
    const found = visit(fiber);
    if (found !== undefined) return found;
  }
  return undefined;
}

/** The plugin name of a row, for diagnostics. */
export function rowPluginName(row: Row): string {
  return pluginName(row.plugin);
}
