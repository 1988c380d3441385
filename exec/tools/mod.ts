/**
 * The standard tools (Read, Write, Edit, Glob, Grep, Bash, TaskStop, TodoWrite, the terminal tools, WebFetch) and the plugin that registers them.
 *
 * Import from `@terret/exec/tools`.
 *
 * @module
 */
export {
  createStdToolsPlugin,
  type StdToolsConfig,
  stdToolsConfig,
  stdToolsPlugin,
  type StdToolsPluginOptions,
} from "./std_tools_plugin.ts";
export {
  createReadTool,
  DEFAULT_READ_OPTIONS,
  type ReadArgs,
  type ReadToolOptions,
} from "./read_tool.ts";
export { createWriteTool, type WriteArgs } from "./write_tool.ts";
export { createEditTool, type EditArgs } from "./edit_tool.ts";
export { createGlobTool, GLOB_MAX_RESULTS, type GlobArgs } from "./glob_tool.ts";
export {
  createGrepTool,
  DEFAULT_GREP_OPTIONS,
  type GrepArgs,
  type GrepToolOptions,
} from "./grep_tool.ts";
export { bashApproval, type BashArgs, type BashToolOptions, createBashTool } from "./bash_tool.ts";
export {
  createTerminalOpenTool,
  TERMINAL_NAME,
  type TerminalOpenArgs,
} from "./terminal_open_tool.ts";
export { createTerminalInputTool, type TerminalInputArgs } from "./terminal_input_tool.ts";
export {
  createTerminalReadTool,
  MAX_TERMINAL_WAIT_MS,
  type TerminalReadArgs,
} from "./terminal_read_tool.ts";
export { createTerminalCloseTool, type TerminalCloseArgs } from "./terminal_close_tool.ts";
export {
  createWebFetchTool,
  DEFAULT_WEB_FETCH_OPTIONS,
  type WebFetchArgs,
  type WebFetchHooks,
  type WebFetchOptions,
} from "./web_fetch_tool.ts";
export { createTaskStopTool, jobOutcome, type TaskStopArgs } from "./task_stop_tool.ts";
export {
  createTodoWriteTool,
  renderTodos,
  type TodoItem,
  type TodoStatus,
  type TodoWriteArgs,
} from "./todo_write_tool.ts";
