/**
 * What a client sends into a session, checked: the `cwd` of `session/new` and `session/load` against the granted
 * directories (through real paths), and prompt content blocks as Terret content.
 *
 * @module
 */
import * as acp from "@agentclientprotocol/sdk";
import type { Content } from "@terret/core/sessions";
import { resolveReal } from "@terret/exec/fs";
import { isAbsolute, relative, resolve } from "node:path";

/** A `-32602` error whose data names the offending field, with the message as given. */
export function invalidParams(
  data: { field: string } & Record<string, unknown>,
  message: string,
): acp.RequestError {
  return new acp.RequestError(-32602, message, data);
}

/** True when `cwd` is a granted root or lies inside one. */
export function withinRoots(cwd: string, roots: readonly string[]): boolean {
  return roots.some((root) => {
    const rel = relative(resolve(root), resolve(cwd));
    return rel === "" || (!rel.startsWith("..") && !isAbsolute(rel));
  });
}

/**
 * ACP prompt blocks as Terret content: text as is, images as image parts (only with `images`: the model takes
 * them), resources as quoted text.
 *
 * @throws {acp.RequestError} `-32602` for audio, or an image the model does not take
 */
export function promptContent(
  blocks: readonly acp.ContentBlock[],
  options: { readonly images?: boolean } = {},
): Content {
  const parts:
    ({ type: "text"; text: string } | { type: "image"; data: string; media_type: string })[] = [];
  for (const block of blocks) {
    switch (block.type) {
      case "text":
        parts.push({ type: "text", text: block.text });
        break;
      case "image":
        if (options.images !== true) {
          throw invalidParams(
            { field: "prompt", type: "image" },
            "Cannot take the prompt: the model does not take images (promptCapabilities.image is false)",
          );
        }
        parts.push({ type: "image", data: block.data, media_type: block.mimeType });
        break;
      case "resource_link":
        parts.push({ type: "text", text: `[${block.name}](${block.uri})` });
        break;
      case "resource":
        if ("text" in block.resource) {
          parts.push({
            type: "text",
            text: `<resource uri="${block.resource.uri}">\n${block.resource.text}\n</resource>`,
          });
        } else parts.push({ type: "text", text: `[binary resource](${block.resource.uri})` });
        break;
      default:
        throw invalidParams(
          { field: "prompt", type: (block as { type: string }).type },
          `Cannot take the prompt: content of type "${block.type}" is not supported`,
        );
    }
  }
  return parts;
}

/**
 * Refuses a `cwd` that is not absolute or whose real location (symbolic links followed, also through a part that
 * does not exist yet) is not a granted root's real location or inside it.
 *
 * @throws {acp.RequestError} `-32602` with `data: {field: "cwd", cwd, roots}`
 */
export async function checkCwd(cwd: string, roots: readonly string[]): Promise<void> {
  const real = async (path: string): Promise<string | undefined> =>
    await resolveReal(resolve(path)).catch(() => undefined);
  let inside = false;
  if (isAbsolute(cwd)) {
    const target = await real(cwd);
    const realRoots = (await Promise.all(roots.map(real))).filter((root) => root !== undefined);
    inside = target !== undefined && withinRoots(target, realRoots);
  }
  if (!inside) {
    throw invalidParams(
      { field: "cwd", cwd, roots },
      `Cannot open a session in "${cwd}": cwd must be an absolute path inside a granted directory (${
        roots.map((root) => `"${root}"`).join(", ")
      })`,
    );
  }
}
