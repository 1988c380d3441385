// The transcript, virtualized: every line lives in `items` (a compact model: kind, seq, the text it shows), and only
// the lines in view plus OVERSCAN on each side are in the DOM, between two spacers whose heights stand for the lines
// above and below (measured once rendered, estimated before). One paint per animation frame.
import { $, el } from "./dom.js";
import { buildLine } from "./line_view.js";

const OVERSCAN = 60;
const ESTIMATE = 26;
// While a replay is still short of the head the server named in hello, paint at most every REPLAY_PAINT_MS (the
// seq counter shows progress); the event that reaches the head, and every live one, paints on the next frame.
const REPLAY_PAINT_MS = 200;

/**
 * The lines of the open agent's transcript, painted into #rows between the #above and #below spacers of #lines.
 * `hooks.replaying()` says whether a replay is still short of the head (paints are then spaced out);
 * `hooks.painted()` runs after each paint (the page's counters).
 */
export class Transcript {
  #hooks;
  #items = [];
  #heights = [];
  #nodes = new Map();
  #follow = true;
  #autoTop = -1;
  #painting = false;
  #paintTimer = null;

  constructor(hooks) {
    this.#hooks = hooks;
  }

  /** Empties the transcript (another agent is opened). */
  reset() {
    this.#items = [];
    this.#heights = [];
    this.#nodes = new Map();
    this.#follow = true;
    $("rows").replaceChildren();
    $("above").style.height = "0px";
    $("below").style.height = "0px";
  }

  /** Appends a line's model and returns it (change it, then `touch` it, to repaint it). */
  add(item) {
    item.v = 0;
    this.#items.push(item);
    this.schedule();
    return item;
  }

  /** Marks a line's model changed. */
  touch(item) {
    item.v++;
    this.schedule();
  }

  // A line in the transcript, and the same text in the banner above it (the last three), which stays in view when
  // the line does not.
  notice(text) {
    this.add({ k: "notice", text: text });
    const banner = $("banner");
    banner.appendChild(el("li", null, text));
    while (banner.children.length > 3) banner.firstChild.remove();
    banner.hidden = false;
  }

  /** The view scrolled: it follows the end again once scrolled back to the bottom. */
  onScroll() {
    const box = $("lines");
    if (Math.abs(box.scrollTop - this.#autoTop) < 1) return; // the paint's own scroll to the bottom
    this.#follow = box.scrollTop + box.clientHeight >= box.scrollHeight - 8;
    this.schedule();
  }

  /** Asks for a paint (see REPLAY_PAINT_MS). */
  schedule() {
    const replaying = this.#hooks.replaying();
    if (this.#painting) {
      if (replaying || this.#paintTimer === null) return;
      clearTimeout(this.#paintTimer);
    }
    this.#painting = true;
    this.#paintTimer = null;
    if (replaying) {
      this.#paintTimer = setTimeout(() => {
        this.#paintTimer = null;
        requestAnimationFrame(() => this.#paint());
      }, REPLAY_PAINT_MS);
    } else requestAnimationFrame(() => this.#paint());
  }

  #heightOf(i) {
    const h = this.#heights[i];
    return h === undefined ? ESTIMATE : h;
  }

  #paint() {
    this.#painting = false;
    const box = $("lines");
    const items = this.#items;
    const n = items.length;
    const view = box.clientHeight || 400;
    let total = 0;
    for (let i = 0; i < n; i++) total += this.#heightOf(i);
    const top = this.#follow ? Math.max(0, total - view) : box.scrollTop;
    let first = 0;
    let acc = 0;
    while (first < n && acc + this.#heightOf(first) <= top) acc += this.#heightOf(first++);
    let last = first;
    let bottom = acc;
    while (last < n && bottom < top + view) bottom += this.#heightOf(last++);
    const start = Math.max(0, first - OVERSCAN);
    const end = Math.min(n, last + OVERSCAN);
    let above = 0;
    for (let i = 0; i < start; i++) above += this.#heightOf(i);
    const nodes = [];
    const kept = new Map();
    const onToggle = () => this.schedule();
    for (let i = start; i < end; i++) {
      const item = items[i];
      let cached = this.#nodes.get(item);
      if (cached === undefined || cached.v !== item.v) {
        cached = { v: item.v, node: buildLine(item, onToggle) };
      }
      kept.set(item, cached);
      nodes.push(cached.node);
    }
    this.#nodes = kept;
    const rows = $("rows");
    let same = rows.children.length === nodes.length;
    for (let i = 0; same && i < nodes.length; i++) same = rows.children[i] === nodes[i];
    if (!same) rows.replaceChildren.apply(rows, nodes);
    for (let i = 0; i < nodes.length; i++) this.#heights[start + i] = nodes[i].offsetHeight;
    let below = 0;
    for (let i = end; i < n; i++) below += this.#heightOf(i);
    $("above").style.height = above + "px";
    $("below").style.height = below + "px";
    if (this.#follow) {
      box.scrollTop = box.scrollHeight;
      this.#autoTop = box.scrollTop;
    }
    this.#hooks.painted();
  }
}
