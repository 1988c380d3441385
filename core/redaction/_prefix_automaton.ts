/**
 * Whether a secret pattern can still match from a point of streamed text: the automaton that lets the streaming
 * redactor release a start marker (`-----BEGIN `) as soon as what follows it rules a match out
 * (`-----BEGIN CERTIFICATE-----`), instead of holding the rest of the answer until its end.
 *
 * It decides by the pattern's language, not by JavaScript's matching order, so laziness and greed do not matter: text
 * is "live" when some continuation of it is a match. A pattern using anything it cannot decide that way (anchors,
 * lookaround, backreferences, property escapes, flag modifiers) is not compiled, and its marker is held as before.
 *
 * @module
 */

/** A set of code points. */
type CharTest = (code: number) => boolean;

/** A parsed pattern. */
type Node =
  | { readonly kind: "char"; readonly test: CharTest }
  | { readonly kind: "seq"; readonly items: readonly Node[] }
  | { readonly kind: "alt"; readonly options: readonly Node[] }
  | { readonly kind: "repeat"; readonly item: Node; readonly min: number; readonly max: number };

/** One state: a character step (`test`, then `next`) or a fork (`eps`, without consuming anything). */
interface State {
  test: CharTest | undefined;
  next: number;
  readonly eps: number[];
}

/** The most states one pattern may compile to (bounded repeats are unrolled); past it the marker is held. */
const MAX_STATES = 20_000;

/** Thrown inside the parser for syntax it does not decide; never escapes {@linkcode compilePrefixAutomaton}. */
class Unsupported extends Error {}

/** Whether a match of one pattern can still begin at the start of some text, whatever follows it. */
export class PrefixAutomaton {
  readonly #states: readonly State[];
  readonly #start: number;

  private constructor(states: readonly State[], start: number) {
    this.#states = states;
    this.#start = start;
  }

  /**
   * Compiles a pattern source (JavaScript syntax, as compiled with the `u` flag); `undefined` for a pattern it
   * cannot decide (anchors, lookaround, backreferences, `\p{…}`, flag modifiers), that unrolls past its state cap or
   * that nests groups deeper than the stack allows.
   */
  static compile(source: string): PrefixAutomaton | undefined {
    try {
      const states: State[] = [];
      const { start, end } = build(new Parser(source).parse(), states);
      states[end]!.next = -1;
      return new PrefixAutomaton(states, start);
    } catch (error) {
      // Syntax it does not decide, or groups nested past the stack's depth: the marker is held, as without it.
      if (error instanceof Unsupported || error instanceof RangeError) return undefined;
      throw error;
    }
  }

  /**
   * True when `text` from `from` is the beginning of some match of the pattern (a continuation exists that makes it
   * one), or contains a whole match starting at `from`; false when no text that follows can make a match start at
   * `from`. Runs over at most the rest of `text`, and stops where the last possible match dies.
   */
  live(text: string, from: number): boolean {
    const states = this.#states;
    let current = this.#closure([this.#start]);
    for (let i = from; i < text.length;) {
      const code = text.codePointAt(i)!;
      i += code > 0xffff ? 2 : 1;
      const stepped: number[] = [];
      for (const id of current) {
        const state = states[id]!;
        // A whole match ends here, before the end of the text: the caller's complete matches say whether it is.
        if (state.test === undefined) return true;
        if (state.test(code)) stepped.push(state.next);
      }
      if (stepped.length === 0) return false;
      current = this.#closure(stepped);
    }
    return true;
  }

  /** The states reachable from `seeds` without consuming a character (the accepting state included). */
  #closure(seeds: readonly number[]): number[] {
    const states = this.#states;
    const seen = new Set<number>();
    const out: number[] = [];
    const stack = [...seeds];
    while (stack.length > 0) {
      const id = stack.pop()!;
      if (seen.has(id)) continue;
      seen.add(id);
      const state = states[id]!;
      if (state.test !== undefined || state.next === -1) out.push(id);
      for (const to of state.eps) stack.push(to);
    }
    return out;
  }
}

/** Builds the states of `node` (Thompson's construction); returns its entry and its exit state. */
function build(node: Node, states: State[]): { start: number; end: number } {
  const add = (): number => {
    if (states.length >= MAX_STATES) throw new Unsupported("too many states");
    states.push({ test: undefined, next: 0, eps: [] });
    return states.length - 1;
  };
  const frame = (item: Node): { start: number; end: number } => {
    switch (item.kind) {
      case "char": {
        const start = add();
        const end = add();
        states[start]!.test = item.test;
        states[start]!.next = end;
        return { start, end };
      }
      case "seq": {
        const start = add();
        let end = start;
        for (const part of item.items) {
          const inner = frame(part);
          states[end]!.eps.push(inner.start);
          end = inner.end;
        }
        return { start, end };
      }
      case "alt": {
        const start = add();
        const end = add();
        for (const option of item.options) {
          const inner = frame(option);
          states[start]!.eps.push(inner.start);
          states[inner.end]!.eps.push(end);
        }
        return { start, end };
      }
      case "repeat": {
        const start = add();
        let end = start;
        for (let i = 0; i < item.min; i++) {
          const inner = frame(item.item);
          states[end]!.eps.push(inner.start);
          end = inner.end;
        }
        if (item.max === Infinity) {
          const inner = frame(item.item);
          const exit = add();
          states[end]!.eps.push(inner.start, exit);
          states[inner.end]!.eps.push(inner.start, exit);
          return { start, end: exit };
        }
        const exit = add();
        for (let i = item.min; i < item.max; i++) {
          const inner = frame(item.item);
          states[end]!.eps.push(inner.start, exit);
          end = inner.end;
        }
        states[end]!.eps.push(exit);
        return { start, end: exit };
      }
    }
  };
  return frame(node);
}

/** A recursive-descent reader of `u`-mode pattern syntax, for the subset the automaton decides. */
class Parser {
  readonly #source: string;
  #at = 0;

  constructor(source: string) {
    this.#source = source;
  }

  parse(): Node {
    const node = this.#disjunction();
    if (this.#at < this.#source.length) throw new Unsupported(`unexpected ")" at ${this.#at}`);
    return node;
  }

  #peek(): string | undefined {
    return this.#source[this.#at];
  }

  #disjunction(): Node {
    const options = [this.#alternative()];
    while (this.#peek() === "|") {
      this.#at++;
      options.push(this.#alternative());
    }
    return options.length === 1 ? options[0]! : { kind: "alt", options };
  }

  #alternative(): Node {
    const items: Node[] = [];
    for (
      let char = this.#peek();
      char !== undefined && char !== "|" && char !== ")";
      char = this.#peek()
    ) {
      items.push(this.#quantified(this.#atom()));
    }
    return { kind: "seq", items };
  }

  #quantified(item: Node): Node {
    const char = this.#peek();
    let min: number;
    let max: number;
    if (char === "*" || char === "+" || char === "?") {
      this.#at++;
      [min, max] = char === "*" ? [0, Infinity] : char === "+" ? [1, Infinity] : [0, 1];
    } else if (char === "{") {
      const bounds = /^\{(\d+)(,(\d*))?\}/.exec(this.#source.slice(this.#at));
      if (bounds === null) throw new Unsupported("a brace that is not a quantifier");
      this.#at += bounds[0].length;
      min = Number(bounds[1]);
      max = bounds[2] === undefined ? min : bounds[3] === "" ? Infinity : Number(bounds[3]);
    } else {
      return item;
    }
    if (this.#peek() === "?") this.#at++; // lazy: the same language
    if (min > MAX_STATES || (max !== Infinity && max > MAX_STATES)) {
      throw new Unsupported("a large repeat");
    }
    return { kind: "repeat", item, min, max };
  }

  #atom(): Node {
    const source = this.#source;
    const char = source[this.#at]!;
    switch (char) {
      case "^":
      case "$":
        throw new Unsupported("an anchor");
      case ".":
        this.#at++;
        return { kind: "char", test: notLineTerminator };
      case "[":
        return this.#class();
      case "(":
        return this.#group();
      case "\\":
        return { kind: "char", test: this.#escape(false) };
      default: {
        const code = source.codePointAt(this.#at)!;
        this.#at += code > 0xffff ? 2 : 1;
        return { kind: "char", test: (c) => c === code };
      }
    }
  }

  #group(): Node {
    const source = this.#source;
    this.#at++;
    if (source[this.#at] === "?") {
      if (source[this.#at + 1] === ":") {
        this.#at += 2;
      } else if (source[this.#at + 1] === "<" && /[A-Za-z_$]/.test(source[this.#at + 2] ?? "")) {
        const close = source.indexOf(">", this.#at);
        if (close < 0) throw new Unsupported("an unclosed group name");
        this.#at = close + 1;
      } else {
        throw new Unsupported("a lookaround or a flag modifier");
      }
    }
    const inner = this.#disjunction();
    if (source[this.#at] !== ")") throw new Unsupported("an unclosed group");
    this.#at++;
    return inner;
  }

  #class(): Node {
    const source = this.#source;
    this.#at++;
    const negated = source[this.#at] === "^";
    if (negated) this.#at++;
    const members: CharTest[] = [];
    while (source[this.#at] !== "]") {
      if (this.#at >= source.length) throw new Unsupported("an unclosed class");
      const low = this.#classAtom();
      if (source[this.#at] === "-" && source[this.#at + 1] !== "]" && low.code !== undefined) {
        this.#at++;
        const high = this.#classAtom();
        if (high.code === undefined) throw new Unsupported("a range to a class escape");
        const [from, to] = [low.code, high.code];
        members.push((c) => c >= from && c <= to);
      } else {
        members.push(low.test);
      }
    }
    this.#at++;
    const test: CharTest = (c) => members.some((member) => member(c));
    return { kind: "char", test: negated ? (c) => !test(c) : test };
  }

  /** One class member: a character (with its code, so it can bound a range) or a class escape. */
  #classAtom(): { test: CharTest; code: number | undefined } {
    const source = this.#source;
    if (source[this.#at] === "\\") {
      if (source[this.#at + 1] === "b") {
        this.#at += 2;
        return { test: (c) => c === 8, code: 8 };
      }
      if (source[this.#at + 1] === "-") {
        this.#at += 2;
        return { test: (c) => c === 0x2d, code: 0x2d };
      }
      const test = this.#escape(true);
      return { test, code: this.#lastCode };
    }
    const code = source.codePointAt(this.#at)!;
    this.#at += code > 0xffff ? 2 : 1;
    return { test: (c) => c === code, code };
  }

  /** The code point of the last character escape read (`undefined` after a class escape such as `\d`). */
  #lastCode: number | undefined;

  /** Reads an escape (`\` included) as a set of code points. */
  #escape(inClass: boolean): CharTest {
    const source = this.#source;
    const letter = source[this.#at + 1];
    if (letter === undefined) throw new Unsupported("a trailing backslash");
    this.#at += 2;
    this.#lastCode = undefined;
    const set = CLASS_ESCAPES[letter];
    if (set !== undefined) return set;
    const single = SINGLE_ESCAPES[letter];
    if (single !== undefined) return this.#char(single);
    if (letter === "x" || letter === "u") return this.#char(this.#hex(letter));
    if (letter === "0" && !/[0-9]/.test(source[this.#at] ?? "")) return this.#char(0);
    if (!inClass && (letter === "b" || letter === "B")) throw new Unsupported("a word boundary");
    // `u` mode allows only syntax characters and `/` as identity escapes; anything else (\p, \k, \1, \c) is left.
    if ("^$\\.*+?()[]{}|/".includes(letter)) return this.#char(letter.codePointAt(0)!);
    throw new Unsupported(`the escape \\${letter}`);
  }

  #char(code: number): CharTest {
    this.#lastCode = code;
    return (c) => c === code;
  }

  /** The code point of `\xHH`, `\uHHHH`, `\u{H…}` or a surrogate pair of `\u` escapes (after its letter). */
  #hex(letter: string): number {
    const rest = this.#source.slice(this.#at);
    const match = letter === "x"
      ? /^[0-9A-Fa-f]{2}/.exec(rest)
      : /^\{[0-9A-Fa-f]+\}|^[0-9A-Fa-f]{4}/.exec(rest);
    if (match === null) throw new Unsupported(`a malformed \\${letter} escape`);
    this.#at += match[0].length;
    let code = Number.parseInt(match[0].replace(/[{}]/g, ""), 16);
    const low = /^\\u([Dd][C-Fc-f][0-9A-Fa-f]{2})/.exec(this.#source.slice(this.#at));
    if (code >= 0xd800 && code <= 0xdbff && low !== null) {
      this.#at += low[0].length;
      code = 0x10000 + ((code - 0xd800) << 10) + (Number.parseInt(low[1]!, 16) - 0xdc00);
    }
    return code;
  }
}

/** `.` without the `s` flag. */
const notLineTerminator: CharTest = (c) => c !== 0x0a && c !== 0x0d && c !== 0x2028 && c !== 0x2029;

/** JavaScript's `\s`: white space and line terminators. */
const isSpace: CharTest = (c) =>
  (c >= 0x09 && c <= 0x0d) || c === 0x20 || c === 0xa0 || c === 0x1680 ||
  (c >= 0x2000 && c <= 0x200a) ||
  c === 0x2028 || c === 0x2029 || c === 0x202f || c === 0x205f || c === 0x3000 || c === 0xfeff;
const isDigit: CharTest = (c) => c >= 0x30 && c <= 0x39;
const isWord: CharTest = (c) =>
  isDigit(c) || (c >= 0x41 && c <= 0x5a) || (c >= 0x61 && c <= 0x7a) || c === 0x5f;

const CLASS_ESCAPES: Readonly<Record<string, CharTest>> = {
  d: isDigit,
  D: (c) => !isDigit(c),
  w: isWord,
  W: (c) => !isWord(c),
  s: isSpace,
  S: (c) => !isSpace(c),
};

const SINGLE_ESCAPES: Readonly<Record<string, number>> = {
  n: 0x0a,
  r: 0x0d,
  t: 0x09,
  f: 0x0c,
  v: 0x0b,
};
