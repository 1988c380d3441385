/**
 * Terret, an agent harness: the runtime that drives LLM agents for orchestrators and editors. This meta package
 * re-exports the kernel and will carry composition (`Terret.boot`) once it lands.
 *
 * @module
 */
export { createContext, definePlugin, defineService, TerretError } from "@terret/hames";
