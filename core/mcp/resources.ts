/**
 * MCP resources exposed as prompt sections: read when the server connects, re-read when it says they changed,
 * rendered from the last good read so the prompt stays byte-stable between changes.
 *
 * @module
 */
import { type Logger, TerretError } from "@terret/hames";
import type { McpConnection } from "./connection.ts";
import { fnv1a } from "./names.ts";

/** A prompt section: rendered on every step, ordered by priority. */
export interface McpPromptSection {
  /** Unique among sections: `mcp.<server, lowercased>:<hash of the uri>` (the prompt service's name rules). */
  readonly name: string;
  readonly priority: number;
  /** The section text; empty until the resource was read once. */
  render(): string;
}

/** Registers a prompt section as an effect; the returned function unregisters it. */
export type RegisterSection = (section: McpPromptSection) => () => unknown;

/** The priority MCP resource sections render at (after persona and instructions, before volatile context). */
export const MCP_RESOURCE_PRIORITY = 600;

interface ResourceContents {
  readonly uri: string;
  readonly mimeType?: string;
  readonly text?: string;
  readonly blob?: string;
}

/**
 * The configured resources of one server, kept as rendered text.
 *
 * Contract: `register` adds one section per URI (in config order) through the given function; `refreshAll` reads
 * every URI and subscribes to its updates where the server supports subscriptions; `refresh(uri)` re-reads one.
 * A failed read keeps the last good text (a section never flips to an error because the server blinked) and is
 * logged. A section renders the same bytes until its resource's content changes.
 */
export class ResourceSections {
  readonly #server: string;
  readonly #uris: readonly string[];
  readonly #connection: McpConnection;
  readonly #logger: Logger;
  readonly #rendered = new Map<string, string>();
  readonly #unregister: (() => unknown)[] = [];

  /**
   * @param server the server name
   * @param uris the resource URIs to expose
   * @param connection where they are read
   * @param logger where failed reads are reported
   */
  constructor(server: string, uris: readonly string[], connection: McpConnection, logger: Logger) {
    this.#server = server;
    this.#uris = [...new Set(uris)];
    this.#connection = connection;
    this.#logger = logger;
  }

  /** Registers one section per URI. */
  register(registerSection: RegisterSection): void {
    for (const uri of this.#uris) {
      this.#unregister.push(registerSection({
        name: `mcp.${this.#server.toLowerCase()}:${fnv1a(uri)}`,
        priority: MCP_RESOURCE_PRIORITY,
        render: () => this.#rendered.get(uri) ?? "",
      }));
    }
  }

  /** The rendered text of a URI ("" until read). */
  text(uri: string): string {
    return this.#rendered.get(uri) ?? "";
  }

  /** Whether `uri` is one of the exposed resources. */
  has(uri: string): boolean {
    return this.#uris.includes(uri);
  }

  /** Reads every URI and subscribes to its updates. */
  async refreshAll(): Promise<void> {
    await Promise.all(this.#uris.map(async (uri) => {
      await this.refresh(uri);
      try {
        await this.#connection.subscribeResource(uri);
      } catch (error) {
        this.#logger.log("warn", `Cannot subscribe to MCP resource "${uri}"`, {
          server: this.#server,
          error,
        });
      }
    }));
  }

  /** Re-reads one URI; keeps the last good text when the read fails. */
  async refresh(uri: string): Promise<void> {
    try {
      const result = await this.#connection.readResource(uri) as {
        contents?: readonly ResourceContents[];
      };
      this.#rendered.set(uri, render(this.#server, uri, result.contents ?? []));
      this.#logger.log("debug", `Read MCP resource "${uri}"`, { server: this.#server });
    } catch (error) {
      if (!(error instanceof TerretError)) throw error;
      this.#logger.log("warn", `Cannot read MCP resource "${uri}": ${error.message}`, {
        server: this.#server,
      });
    }
  }

  /** Unregisters every section. */
  async close(): Promise<void> {
    const unregister = this.#unregister.splice(0);
    for (const undo of unregister.reverse()) await undo();
  }
}

function render(server: string, uri: string, contents: readonly ResourceContents[]): string {
  const body = contents.map((content) => {
    if (content.text !== undefined) return content.text;
    const bytes = Math.floor((content.blob ?? "").length * 3 / 4);
    return `[binary content${
      content.mimeType ? ` (${content.mimeType})` : ""
    }, about ${bytes} bytes]`;
  }).join("\n");
  const mime = contents[0]?.mimeType;
  return `<mcp-resource server="${escapeAttribute(server)}" uri="${escapeAttribute(uri)}"${
    mime === undefined ? "" : ` mime="${escapeAttribute(mime)}"`
  }>\n${body}\n</mcp-resource>`;
}

function escapeAttribute(value: string): string {
  return value.replace(/&/g, "&amp;").replace(/"/g, "&quot;").replace(/</g, "&lt;");
}
