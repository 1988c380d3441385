/**
 * HTML to readable text for WebFetch: scripts, styles and other invisible elements dropped, blocks on their own
 * lines, headings and list items marked Markdown-style, links kept as `[text](absolute url)`, entities decoded,
 * whitespace collapsed (except in `<pre>`). A tolerant tokenizer, not a DOM. Internal to `@terret/exec`.
 *
 * @module
 */

const DROP = new Set([
  "script",
  "style",
  "noscript",
  "template",
  "svg",
  "head",
  "title",
  "iframe",
  "object",
  "canvas",
]);
const BLOCK = new Set([
  "address",
  "article",
  "aside",
  "blockquote",
  "body",
  "dd",
  "div",
  "dl",
  "dt",
  "fieldset",
  "figcaption",
  "figure",
  "footer",
  "form",
  "header",
  "hr",
  "html",
  "li",
  "main",
  "nav",
  "ol",
  "p",
  "pre",
  "section",
  "table",
  "tbody",
  "td",
  "tfoot",
  "th",
  "thead",
  "tr",
  "ul",
  "h1",
  "h2",
  "h3",
  "h4",
  "h5",
  "h6",
  "br",
]);
const VOID = new Set([
  "br",
  "hr",
  "img",
  "input",
  "meta",
  "link",
  "area",
  "base",
  "col",
  "embed",
  "source",
  "wbr",
]);
const ENTITIES: Readonly<Record<string, string>> = {
  amp: "&",
  lt: "<",
  gt: ">",
  quot: '"',
  apos: "'",
  nbsp: " ",
  copy: "©",
  reg: "®",
  trade: "™",
  hellip: "…",
  mdash: "—",
  ndash: "–",
  lsquo: "‘",
  rsquo: "’",
  ldquo: "“",
  rdquo: "”",
  laquo: "«",
  raquo: "»",
  middot: "·",
  bull: "•",
  deg: "°",
  euro: "€",
  pound: "£",
  yen: "¥",
  cent: "¢",
  times: "×",
  divide: "÷",
  para: "¶",
  sect: "§",
};

/** Decodes HTML character references (named ones in a common set, every numeric one). */
function decodeEntities(text: string): string {
  return text.replace(
    /&(#[xX][0-9a-fA-F]{1,6}|#[0-9]{1,7}|[A-Za-z][A-Za-z0-9]{1,31});/g,
    (whole, ref: string) => {
      if (ref.startsWith("#")) {
        const code = ref[1] === "x" || ref[1] === "X"
          ? parseInt(ref.slice(2), 16)
          : parseInt(ref.slice(1), 10);
        return code > 0 && code <= 0x10ffff && !(code >= 0xd800 && code <= 0xdfff)
          ? String.fromCodePoint(code)
          : "\uFFFD";
      }
      return ENTITIES[ref.toLowerCase()] ?? whole;
    },
  );
}

/** The document's `<title>`, decoded, or `undefined`. */
export function htmlTitle(html: string): string | undefined {
  const match = /<title[^>]*>([\s\S]*?)<\/title\s*>/i.exec(html);
  const title = match === null ? "" : decodeEntities(match[1]!).replace(/\s+/g, " ").trim();
  return title === "" ? undefined : title;
}

/** Converts an HTML document to readable text; relative links resolve against `base`. */
export function htmlToText(html: string, base: URL): string {
  const out: string[] = [];
  let line = "";
  const links: { href: string; start: number }[] = [];
  let drop: string | undefined;
  let pre = 0;
  let listDepth = 0;
  const flush = (): void => {
    const trimmed = pre > 0 ? line.replace(/\s+$/, "") : line.trim();
    if (trimmed !== "" || (pre > 0 && line !== "")) out.push(trimmed);
    line = "";
  };
  const blank = (): void => {
    flush();
    if (out.length > 0 && out.at(-1) !== "") out.push("");
  };
  const tokens =
    /<!--[\s\S]*?-->|<!\[CDATA\[[\s\S]*?\]\]>|<![^>]*>|<\/?([A-Za-z][A-Za-z0-9-]*)((?:\s+[^\s"'>/=]+(?:\s*=\s*(?:"[^"]*"|'[^']*'|[^\s"'=<>`]+))?)*)\s*\/?>|[^<]+|</g;
  for (const token of html.matchAll(tokens)) {
    const text = token[0];
    const name = token[1]?.toLowerCase();
    if (name === undefined) {
      if (drop !== undefined || text.startsWith("<!")) continue;
      const decoded = decodeEntities(text);
      if (pre > 0) {
        const parts = decoded.split("\n");
        parts.forEach((part, i) => {
          if (i > 0) {
            out.push(line.replace(/\s+$/, ""));
            line = "";
          }
          line += part;
        });
      } else {
        const collapsed = decoded.replace(/\s+/g, " ");
        line += line === "" || line.endsWith(" ") ? collapsed.replace(/^ /, "") : collapsed;
      }
      continue;
    }
    const closing = text.startsWith("</");
    if (drop !== undefined) {
      if (closing && name === drop) drop = undefined;
      continue;
    }
    if (!closing && DROP.has(name) && !text.endsWith("/>")) {
      drop = name;
      continue;
    }
    if (name === "a") {
      if (!closing) {
        const href = /\bhref\s*=\s*(?:"([^"]*)"|'([^']*)'|([^\s"'=<>`]+))/i.exec(token[2] ?? "");
        const raw = href === null ? undefined : decodeEntities(href[1] ?? href[2] ?? href[3] ?? "");
        if (raw !== undefined && !/^\s*(javascript|data):/i.test(raw)) {
          try {
            links.push({ href: new URL(raw, base).href, start: line.length });
            line += "[";
          } catch {
            // An unparseable href: keep the text only.
          }
        }
      } else if (links.length > 0) {
        const link = links.pop()!;
        line = line.slice(0, link.start) + line.slice(link.start).replace(/\s+$/, "") +
          `](${link.href})`;
      }
      continue;
    }
    if (name === "pre") {
      blank();
      pre += closing ? -1 : 1;
      if (pre < 0) pre = 0;
      continue;
    }
    if (name === "ul" || name === "ol") {
      listDepth += closing ? -1 : 1;
      if (listDepth < 0) listDepth = 0;
      flush();
      continue;
    }
    if (/^h[1-6]$/.test(name)) {
      blank();
      if (!closing) line = `${"#".repeat(Number(name[1]))} `;
      continue;
    }
    if (name === "li" && !closing) {
      flush();
      line = `${"  ".repeat(Math.max(0, listDepth - 1))}- `;
      continue;
    }
    if (name === "br") {
      flush();
      continue;
    }
    if (name === "p" || name === "blockquote" || name === "table" || name === "hr") {
      blank();
      continue;
    }
    if (name === "td" || name === "th") {
      if (!closing && line.trim() !== "") line += " | ";
      continue;
    }
    if (BLOCK.has(name) && !VOID.has(name)) flush();
  }
  flush();
  while (out.at(-1) === "") out.pop();
  return out.join("\n");
}
