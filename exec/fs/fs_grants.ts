/**
 * The `fs.grants` service: directories outside the workspace that the `fs` seam lets agents read but never write
 * (a background job's output, which the model reads with `Read`).
 *
 * @module
 */
import { type Context, defineService, type Disposer, type ServiceKey } from "@terret/hames";
import { isAbsolute } from "node:path";

/**
 * Read-only grants on top of the workspace.
 *
 * Contract: `grantReadOnly` takes an absolute real directory (a `TypeError` otherwise) and admits `read`, `stat`,
 * `list` and `glob` inside it (after the same containment and `fs/authorize` as the workspace) until the returned
 * disposer runs or `owner` is disposed; `write` and `edit` there stay `Denied`. It never widens write access and
 * never grants a file outside the directory (links are resolved before the check, as for the workspace).
 */
export interface FsGrants {
  /** Grants read of `dir` until disposed (an effect on `owner`). */
  grantReadOnly(owner: Context, dir: string): Disposer;
  /** The directories currently granted read-only, in grant order. */
  readonly readOnlyDirs: readonly string[];
}

/** The read-only grants' service key (provided by the `fs` row). */
export const FsGrantsKey: ServiceKey<FsGrants> = defineService<FsGrants>(
  "fs.grants",
  "Directories the fs seam lets agents read but not write (background job output)",
);

/** The {@linkcode FsGrants} the `fs` row provides. */
export class ReadOnlyGrants implements FsGrants {
  #dirs: readonly string[] = Object.freeze([]);

  get readOnlyDirs(): readonly string[] {
    return this.#dirs;
  }

  grantReadOnly(owner: Context, dir: string): Disposer {
    if (typeof dir !== "string" || !isAbsolute(dir)) {
      throw new TypeError(
        `Cannot grant read of ${JSON.stringify(dir)}: the directory must be an absolute real path`,
      );
    }
    return owner.effect(() => {
      this.#dirs = Object.freeze([...this.#dirs, dir]);
      return () => {
        const at = this.#dirs.indexOf(dir);
        if (at !== -1) this.#dirs = Object.freeze(this.#dirs.toSpliced(at, 1));
      };
    }, `fs: read-only grant ${dir}`);
  }
}
