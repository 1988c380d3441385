/**
 * Layering: bundles, then the profile patch, then the home patch, then `--patch` overlays. Each layer overrides the
 * one before by row id: a bundle row replaces a row wholesale, a patch row replaces the fields it sets (its
 * `config` wholesale, never deep-merged) or inserts a new row at a `before:`/`after:` anchor.
 *
 * @module
 */
import { TerretError } from "./errors.ts";
import type { RowSpec, SourceRef } from "./config_files.ts";

/** The kind of a layer: bundle rows must be complete; patch rows may set only some fields. */
export type LayerKind = "bundle" | "patch";

/** One layer of rows. */
export interface Layer {
  /** `bundle` or `patch`. */
  readonly kind: LayerKind;
  /** The layer's name as shown in annotations and errors (`bundle base`, `home patch`). */
  readonly name: string;
  /** The file the layer was read from. */
  readonly file: string;
  /** Its rows, in order. */
  readonly rows: readonly RowSpec[];
}

/** A row after layering, with the source of each part. Config tags are still unresolved. */
export interface ComposedRow {
  /** The row id. */
  readonly id: string;
  /** The plugin name. */
  readonly plugin: string;
  /** The config as written by the layer in `configBy` (tags unresolved). */
  readonly config: unknown;
  /** Whether the row is disabled. */
  readonly disabled: boolean;
  /** Keys the row's subtree isolates. */
  readonly isolate?: readonly string[];
  /** The layer that introduced the row (or last replaced it wholesale). */
  readonly setBy: SourceRef;
  /** The layer whose config is in force. */
  readonly configBy: SourceRef;
  /** The layer that set the plugin. */
  readonly pluginBy: SourceRef;
  /** The layer that set `disabled`, when one did. */
  readonly disabledBy?: SourceRef;
}

/**
 * Applies `layers` in order.
 *
 * @returns the composed rows, in order
 * @throws {TerretError} `PatchTargetMissing` for a patch row naming an unknown id without a plugin,
 *   `PatchAnchorMissing` for an unknown `before`/`after` anchor, `ConfigShape` for a bundle row without a plugin
 *   or an anchor on an existing row
 */
export function composeLayers(layers: readonly Layer[]): ComposedRow[] {
  const rows: ComposedRow[] = [];
  for (const layer of layers) {
    for (const spec of layer.rows) applyRow(rows, layer, spec);
  }
  return rows;
}

function applyRow(rows: ComposedRow[], layer: Layer, spec: RowSpec): void {
  const at = `${layer.name} "${spec.source.file}" line ${spec.source.line}`;
  const index = rows.findIndex((row) => row.id === spec.id);
  if (index >= 0 && (spec.before !== undefined || spec.after !== undefined)) {
    throw new TerretError(
      "ConfigShape",
      `Cannot apply row "${spec.id}" from ${at}: "before"/"after" only place new rows, and this id already exists (set by ${
        rows[index]!.setBy.layer
      })`,
      { details: { row: spec.id, file: spec.source.file, line: spec.source.line } },
    );
  }
  if (layer.kind === "bundle" || index < 0) {
    if (spec.plugin === undefined) {
      const known = rows.map((row) => row.id).join(", ") || "none";
      throw new TerretError(
        index < 0 && layer.kind === "patch" ? "PatchTargetMissing" : "ConfigShape",
        index < 0 && layer.kind === "patch"
          ? `Cannot apply row "${spec.id}" from ${at}: no earlier layer has a row with this id (known: ${known}); to insert a new row, give it a plugin`
          : `Cannot apply row "${spec.id}" from ${at}: a bundle row needs a plugin`,
        { details: { row: spec.id, file: spec.source.file, line: spec.source.line } },
      );
    }
    const row: ComposedRow = {
      id: spec.id,
      plugin: spec.plugin,
      config: spec.hasConfig ? spec.config : {},
      disabled: spec.disabled ?? false,
      ...(spec.isolate === undefined ? {} : { isolate: spec.isolate }),
      setBy: spec.source,
      configBy: spec.source,
      pluginBy: spec.source,
      ...(spec.disabled === undefined ? {} : { disabledBy: spec.source }),
    };
    if (index >= 0) rows[index] = row;
    else rows.splice(insertionIndex(rows, spec, at), 0, row);
    return;
  }
  if (
    spec.plugin === undefined && !spec.hasConfig && spec.disabled === undefined &&
    spec.isolate === undefined
  ) {
    throw new TerretError(
      "ConfigShape",
      `Cannot apply row "${spec.id}" from ${at}: it sets nothing (give it config, plugin, disabled or isolate)`,
      { details: { row: spec.id, file: spec.source.file, line: spec.source.line } },
    );
  }
  const old = rows[index]!;
  rows[index] = {
    ...old,
    ...(spec.plugin === undefined ? {} : { plugin: spec.plugin, pluginBy: spec.source }),
    ...(spec.hasConfig ? { config: spec.config, configBy: spec.source } : {}),
    ...(spec.disabled === undefined ? {} : { disabled: spec.disabled, disabledBy: spec.source }),
    ...(spec.isolate === undefined ? {} : { isolate: spec.isolate }),
  };
}

function insertionIndex(rows: readonly ComposedRow[], spec: RowSpec, at: string): number {
  const anchor = spec.before ?? spec.after;
  if (anchor === undefined) return rows.length;
  const index = rows.findIndex((row) => row.id === anchor);
  if (index < 0) {
    throw new TerretError(
      "PatchAnchorMissing",
      `Cannot insert row "${spec.id}" from ${at}: its anchor "${
        spec.before === undefined ? "after" : "before"
      }: ${anchor}" names no earlier row`,
      { details: { row: spec.id, anchor, file: spec.source.file, line: spec.source.line } },
    );
  }
  return spec.before === undefined ? index + 1 : index;
}
