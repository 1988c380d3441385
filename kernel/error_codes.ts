/**
 * Error code tables: each package declares the codes its {@linkcode TerretError}s carry, once, with a description,
 * and gets a guard typed by that table, so a misspelt code is a compile error rather than a branch that never runs.
 *
 * @module
 */
import { TerretError } from "./errors.ts";

const ERROR_CODES = Symbol.for("terret.error_codes");

/**
 * A package's declared error codes (see {@linkcode defineErrorCodes}).
 *
 * Contract: `codes` maps each code the package throws to a one-line description of the condition; `is` narrows
 * only to codes in this table or in the tables it builds on, and never throws.
 */
export interface ErrorCodes<Own extends string, Known extends string = Own> {
  /** The package that declares the codes, e.g. `"@terret/core"`. */
  readonly owner: string;
  /** Each code the package throws, with a description of the condition. */
  readonly codes: Readonly<Record<Own, string>>;
  /** The tables this one builds on (their codes are accepted by {@linkcode ErrorCodes.is}). */
  readonly base: readonly ErrorCodes<string>[];
  /**
   * True when `error` is a {@linkcode TerretError} whose code is `code`, or (without `code`) any code of this
   * table or of its base tables.
   */
  is<C extends Known>(error: unknown, code?: C): error is TerretError<C>;
}

/** The union of codes an {@linkcode ErrorCodes} table accepts. */
export type ErrorCodeOf<T> = T extends ErrorCodes<string, infer Known> ? Known : never;

/**
 * Declares a package's error codes. Pass the tables of the packages it builds on as `base` so its guard accepts
 * their codes too (core builds on the kernel's, exec on core's).
 *
 * @example
 * ```ts
 * import { defineErrorCodes, HAMES_ERRORS, TerretError } from "@terret/hames";
 *
 * const BUDGET_ERRORS = defineErrorCodes("budget-plugin", {
 *   BudgetExceeded: "A step would spend more than the configured budget",
 * }, [HAMES_ERRORS]);
 * const error = new TerretError("BudgetExceeded", 'Cannot start the step: budget "10" is spent');
 * console.log(BUDGET_ERRORS.is(error, "BudgetExceeded")); // true
 * // BUDGET_ERRORS.is(error, "BudgetExceded") does not compile
 * ```
 *
 * @param owner the declaring package
 * @param codes each code with a one-line description (sentence case, no trailing period)
 * @param base the tables this one builds on
 * @throws {TypeError} when a code is not PascalCase or has an empty description
 */
export function defineErrorCodes<const T extends Record<string, string>, B extends string = never>(
  owner: string,
  codes: T,
  base: readonly ErrorCodes<string, B>[] = [],
): ErrorCodes<keyof T & string, (keyof T & string) | B> {
  for (const [code, description] of Object.entries(codes)) {
    if (!/^[A-Z][A-Za-z0-9]*$/.test(code)) {
      throw new TypeError(`Cannot declare error code "${code}": codes are PascalCase`);
    }
    if (description.trim() === "") {
      throw new TypeError(`Cannot declare error code "${code}": the description is empty`);
    }
  }
  const known = new Set<string>(Object.keys(codes));
  for (const table of base) for (const code of knownCodes(table)) known.add(code);
  const table = {
    owner,
    codes: Object.freeze({ ...codes }),
    base: Object.freeze([...base]),
    is(error: unknown, code?: string): boolean {
      if (!(error instanceof TerretError)) return false;
      return code === undefined ? known.has(error.code) : error.code === code;
    },
    [ERROR_CODES]: known,
  };
  return Object.freeze(table) as unknown as ErrorCodes<keyof T & string, (keyof T & string) | B>;
}

/** True when `value` was made by {@linkcode defineErrorCodes} (the catalog finds exported tables with it). */
export function isErrorCodes(value: unknown): value is ErrorCodes<string> {
  return typeof value === "object" && value !== null && ERROR_CODES in value;
}

/** Every code a table accepts: its own and those of its base tables. */
export function knownCodes(table: ErrorCodes<string>): ReadonlySet<string> {
  return (table as unknown as { [ERROR_CODES]: ReadonlySet<string> })[ERROR_CODES];
}
