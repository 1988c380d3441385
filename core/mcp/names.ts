/**
 * Tool names for MCP tools: `mcp__<server>__<tool>`, sanitised to what model providers accept.
 *
 * @module
 */

/** The longest tool name model providers accept (OpenAI and Anthropic: 64). */
export const MAX_TOOL_NAME_LENGTH = 64;

/**
 * The registered name of an MCP tool: `mcp__<server>__<tool>`, where characters outside `[A-Za-z0-9_-]` become `_`,
 * leading `_` and `-` are dropped (the tool part starts with a letter or digit), and a name past 64 characters keeps
 * its head and gains an 8-hex-digit hash of the original tool name, so long names that share a prefix stay
 * distinct. Two tools may still sanitise to one name (`a.b` and `a_b`); the roster refuses that clash.
 *
 * @param server a server name matching `SERVER_NAME_PATTERN` (the row schema checks it)
 * @param tool the server's own tool name
 * @returns a name the registry accepts (`TOOL_NAME_PATTERN`, and `parseMcpToolName` gives back `server`)
 * @throws {RangeError} when the server name leaves no room for a tool name
 */
export function sanitiseMcpToolName(server: string, tool: string): string {
  const prefix = `mcp__${server}__`;
  const safe = tool.replace(/[^A-Za-z0-9_-]/g, "_").replace(/^[_-]+/, "") || "tool";
  if (prefix.length + safe.length <= MAX_TOOL_NAME_LENGTH) return prefix + safe;
  const suffix = `_${fnv1a(tool)}`;
  const room = MAX_TOOL_NAME_LENGTH - prefix.length - suffix.length;
  if (room < 1) {
    throw new RangeError(`Cannot name the tools of MCP server "${server}": its name is too long`);
  }
  return prefix + safe.slice(0, room) + suffix;
}

/** The 32-bit FNV-1a hash of a string's UTF-16 code units, as 8 hex digits. */
export function fnv1a(text: string): string {
  let hash = 0x811c9dc5;
  for (let i = 0; i < text.length; i++) {
    hash ^= text.charCodeAt(i);
    hash = Math.imul(hash, 0x01000193) >>> 0;
  }
  return hash.toString(16).padStart(8, "0");
}
