/**
 * `Read`: a text file as numbered lines (a window of them), or an image as an image part, through the `fs` seam.
 *
 * @module
 */
import { defineTool, type ToolDefinition } from "@terret/core";
import { TerretError } from "../errors.ts";
import { z } from "zod";
import { type FileSystem, FsKey } from "../fs/file_system.ts";
import { base64, explainDenied, plural, requireAbsolute, seam } from "./_common.ts";

/** Options of {@linkcode createReadTool} (the `tools.std` row's `read` config). */
export interface ReadToolOptions {
  /** Lines shown when the call gives no `limit`. */
  readonly default_lines: number;
  /** Characters kept per line; the rest is cut with a marker. */
  readonly max_line_chars: number;
  /** Bytes scanned for one call before it stops (a file of few, huge lines). */
  readonly max_scan_bytes: number;
  /** Largest image returned as an image part. */
  readonly max_image_bytes: number;
}

/** The defaults of {@linkcode ReadToolOptions}. */
export const DEFAULT_READ_OPTIONS: ReadToolOptions = Object.freeze({
  default_lines: 2000,
  max_line_chars: 2000,
  max_scan_bytes: 64 * 1024 * 1024,
  max_image_bytes: 3 * 1024 * 1024,
});

const IMAGE_TYPES: Readonly<Record<string, string>> = {
  png: "image/png",
  jpg: "image/jpeg",
  jpeg: "image/jpeg",
  gif: "image/gif",
  webp: "image/webp",
};

const CHUNK = 256 * 1024;
const SNIFF = 8192;

/** The arguments of `Read`. */
export interface ReadArgs {
  readonly file_path: string;
  readonly offset?: number | undefined;
  readonly limit?: number | undefined;
  readonly pages?: string | undefined;
  readonly allow_large?: boolean | undefined;
}

const parameters: z.ZodType<ReadArgs> = z.strictObject({
  file_path: z.string().min(1).describe("The absolute path of the file to read"),
  offset: z.number().int().min(1).optional().describe(
    "The line number to start at (1-based); give it with limit for long files",
  ),
  limit: z.number().int().min(1).optional().describe("How many lines to read"),
  pages: z.string().optional().describe("Page range of a PDF (not supported here; always refused)"),
  allow_large: z.boolean().optional().describe(
    "Read to the end of the file instead of the default window (the output cap still applies)",
  ),
});

/**
 * Creates `Read` (`file_path`, `offset?`, `limit?`, `pages?`, `allow_large?`). Text comes back as `cat -n` lines
 * (`     1\t…`, the number right-aligned in six columns, then a tab), `default_lines` of them unless `limit` or
 * `allow_large` says otherwise, each cut at `max_line_chars`, followed by a note naming the next offset when more
 * lines follow. A PNG, JPEG, GIF or WebP file comes back as a text part and an image part. A file holding a NUL
 * byte in its first 8 KiB is refused as binary; other bytes that are not UTF-8 are shown as U+FFFD.
 * Non-mutating, parallel, approval `never` (the allow list still gates it).
 */
export function createReadTool(
  options: ReadToolOptions = DEFAULT_READ_OPTIONS,
): ToolDefinition<ReadArgs> {
  return defineTool({
    name: "Read",
    description:
      "Reads a file from the workspace. Text is returned as numbered lines (cat -n style: the line number, a " +
      `tab, the line); by default the first ${options.default_lines} lines, or use offset and limit for a ` +
      `window. Lines longer than ${options.max_line_chars} characters are cut. PNG, JPEG, GIF and WebP images ` +
      "are returned as images. file_path must be absolute.",
    parameters,
    mutating: false,
    concurrency: "parallel",
    approval: "never",
    kind: "read",
    async handler(args, run) {
      const fs = seam(run.ctx, FsKey, "Read");
      requireAbsolute(args.file_path, "file_path", fs.dirs);
      if (args.pages !== undefined) {
        throw new TypeError(
          `Cannot read pages ${JSON.stringify(args.pages)}: PDF reading is not supported`,
        );
      }
      try {
        const stat = await fs.stat(args.file_path, { signal: run.signal });
        if (stat.type === "directory") {
          throw new TerretError(
            "NotAFile",
            `Cannot read "${args.file_path}": it is a directory (use Glob to list it)`,
          );
        }
        const ext = args.file_path.toLowerCase().match(/\.([a-z0-9]+)$/)?.[1] ?? "";
        const media = IMAGE_TYPES[ext];
        if (media !== undefined) {
          return await readImage(fs, args.file_path, media, stat.size, options, run.signal);
        }
        return await readText(fs, args, stat.size, options, run.signal);
      } catch (error) {
        return explainDenied(error, fs.dirs);
      }
    },
  });
}

async function readImage(
  fs: FileSystem,
  path: string,
  media: string,
  size: number,
  options: ReadToolOptions,
  signal: AbortSignal,
): Promise<
  readonly [{ type: "text"; text: string }, { type: "image"; media_type: string; data: string }]
> {
  if (size > options.max_image_bytes) {
    throw new TerretError(
      "TooLarge",
      `Cannot read image "${path}": ${size} bytes is over the ${options.max_image_bytes}-byte image limit`,
    );
  }
  const bytes = await fs.readBytes(path, {
    signal,
    maxBytes: Math.max(1, options.max_image_bytes),
  });
  return [
    { type: "text", text: `Image ${path} (${media}, ${bytes.length} bytes)` },
    { type: "image", media_type: media, data: base64(bytes) },
  ];
}

interface Window {
  readonly file_path: string;
  readonly offset?: number | undefined;
  readonly limit?: number | undefined;
  readonly allow_large?: boolean | undefined;
}

async function readText(
  fs: FileSystem,
  args: Window,
  size: number,
  options: ReadToolOptions,
  signal: AbortSignal,
): Promise<string | { content: string; is_error: true }> {
  const path = args.file_path;
  if (size === 0) return `The file ${path} exists but is empty.`;
  const first = args.offset ?? 1;
  const limit = args.limit ?? (args.allow_large ? Infinity : options.default_lines);
  const last = first + limit - 1;
  const decoder = new TextDecoder("utf-8", { fatal: false, ignoreBOM: true });
  const out: string[] = [];
  let lineNo = 1;
  let partial = "";
  let position = 0;
  let more = false;
  let stoppedAt: number | undefined;
  const take = (line: string): void => {
    if (lineNo >= first && lineNo <= last) out.push(render(lineNo, line, options.max_line_chars));
    else if (lineNo > last) more = true;
    lineNo++;
  };
  while (position < size && !more) {
    if (position >= options.max_scan_bytes) {
      stoppedAt = position;
      break;
    }
    const length = Math.min(CHUNK, size - position);
    const bytes = await fs.readBytes(path, { offset: position, length, maxBytes: CHUNK, signal });
    if (bytes.length === 0) break;
    if (position === 0 && bytes.subarray(0, SNIFF).includes(0)) {
      throw new TerretError(
        "NotText",
        `Cannot read "${path}": it is a binary file (${size} bytes); Read shows text files and images`,
      );
    }
    position += bytes.length;
    const text = partial + decoder.decode(bytes, { stream: position < size });
    const lines = text.split("\n");
    partial = lines.pop()!;
    for (const line of lines) {
      take(line);
      if (more) break;
    }
    // Keep a runaway line bounded while it is still being scanned.
    if (partial.length > options.max_line_chars + 1) {
      partial = partial.slice(0, options.max_line_chars + 1);
    }
  }
  if (!more && stoppedAt === undefined && partial !== "") take(partial);
  const total = lineNo - 1;
  if (out.length === 0 && !more) {
    return {
      content: `Cannot read "${path}" from line ${first}: the file has ${plural(total, "line")}`,
      is_error: true,
    };
  }
  if (more) out.push(`\n[more lines follow: call Read with offset ${last + 1} to continue]`);
  if (stoppedAt !== undefined) {
    out.push(
      `\n[stopped after scanning ${stoppedAt} of ${size} bytes; use Grep to find lines further on]`,
    );
  }
  return out.join("\n");
}

function render(lineNo: number, line: string, maxChars: number): string {
  const kept = line.length > maxChars
    ? `${line.slice(0, maxChars)}… [line cut at ${maxChars} characters]`
    : line;
  return `${String(lineNo).padStart(6)}\t${kept}`;
}
