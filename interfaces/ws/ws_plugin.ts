/**
 * The `terret-ws` plugin (row `interfaces.ws`): mounts the socket server over the session log and the agents
 * service, and provides it as the `ws` service.
 *
 * @module
 */
import { defineService, type HostPermissions, Service, type ServiceKey } from "@terret/hames";
import { AgentsKey, ApprovalsKey, CredentialsKey, SessionsKey } from "@terret/core";
import { agentsGateway } from "./agent_gateway.ts";
import { tokenFilePath, type WsConfig, wsConfig, type WsConfigInput } from "./config.ts";
import { resolveTokens, type TokenReport } from "./token_file.ts";
import { WsServer, type WsStats } from "./ws_server.ts";
import { dirname } from "node:path";
import type { z } from "zod";

/** What the `ws` service offers: where it listens and what it is doing. */
export interface WsService {
  /** `ws://host:port`. */
  readonly url: string;
  /** The bound port (the configured one, or the one picked for port 0). */
  readonly port: number;
  /** The bound host. */
  readonly hostname: string;
  /** The web console's address (`http://host:port/`) when the row's `console` key serves it, else `undefined`. */
  readonly console: string | undefined;
  /** The server's figures. */
  stats(): WsStats;
  /** Where the tokens came from (the generated token itself only when it was created at this start). */
  tokens(): TokenReport;
}

/** The `ws` service key. */
export const WsServiceKey: ServiceKey<WsService> = defineService<WsService>(
  "ws",
  "The WebSocket event stream server (row interfaces.ws): its address and figures",
);

/**
 * The WebSocket event stream (plugin `terret-ws`, row `interfaces.ws`; docs/protocol.md). Injects `sessions` and
 * `agents`. A live reconfigure applies tokens, limits and caps in place and rebinds a changed address (see
 * {@linkcode WsServer.reconfigure}). Host permissions: `net` for its listen address.
 */
export class WsInterface extends Service<WsConfig> implements WsService {
  /** The plugin name rows use. */
  static readonly pluginName = "terret-ws";
  /** One line for the config catalog. */
  static readonly description =
    "The WebSocket event stream (row interfaces.ws): one connection per agent, replay then live tail, steering frames.";
  /** The service key. */
  static readonly key: ServiceKey<WsService> = WsServiceKey;
  /** The log and the agents. */
  static readonly inject: readonly ServiceKey<unknown>[] = [SessionsKey, AgentsKey];
  /** The config schema. */
  static readonly config: z.ZodType<WsConfig, WsConfigInput> = wsConfig;

  /**
   * `net` for the listen address (`host:port`; the host alone for port 0, which may pick any port), `env` for
   * `token_env`, and `read`/`write` of the token file's directory (the file is created there, whole, by a link).
   */
  static permissions(config: WsConfig): HostPermissions {
    const host = config.host.includes(":") ? `[${config.host}]` : config.host;
    const file = tokenFilePath(config);
    return {
      net: [config.port === 0 ? host : `${host}:${config.port}`],
      ...(config.token_env === undefined ? {} : { env: [config.token_env] }),
      ...(file === undefined ? {} : { read: [dirname(file)], write: [dirname(file)] }),
    };
  }

  #server: WsServer | undefined;
  #tokens: TokenReport | undefined;

  /** Resolves the tokens (generating the token file when it is the only source), binds the address and serves. */
  override async start(): Promise<void> {
    const { grants, report } = await resolveTokens(this.config, this.#env());
    this.#holdSecrets(grants);
    this.#server = await WsServer.start({
      ctx: this.ctx,
      sessions: this.ctx.get(SessionsKey),
      agents: agentsGateway(
        this.ctx.get(AgentsKey),
        this.ctx.get(SessionsKey),
        () => this.ctx.maybe(ApprovalsKey),
      ),
      config: { ...this.config, tokens: grants },
      logger: this.ctx.logger,
    });
    this.#tokens = report;
  }

  /** Closes every connection (1001) and the listener. */
  override async stop(): Promise<void> {
    await this.#server?.close();
  }

  /** Applies a new config to the running server (its tokens resolved again). */
  override async reconfigure(config: WsConfig): Promise<void> {
    const { grants, report } = await resolveTokens(config, this.#env());
    this.#holdSecrets(grants);
    await this.#running().reconfigure({ ...config, tokens: grants });
    this.#tokens = report;
  }

  get url(): string {
    return this.#running().url;
  }

  get port(): number {
    return this.#running().port;
  }

  get hostname(): string {
    return this.#running().hostname;
  }

  get console(): string | undefined {
    const server = this.#running();
    return server.config.console ? `${server.url.replace(/^ws:/, "http:")}/` : undefined;
  }

  stats(): WsStats {
    return this.#running().stats();
  }

  tokens(): TokenReport {
    this.#running();
    return this.#tokens!;
  }

  /** The environment, read through the credentials row (the one door for secrets) when there is one. */
  #env(): { get(name: string): string | undefined } {
    const credentials = this.ctx.maybe(CredentialsKey);
    return credentials === undefined ? Deno.env : { get: (name) => credentials.env(name) };
  }

  /** Every token (configured, from the environment, generated) is a secret the redactor must know. */
  #holdSecrets(grants: readonly { readonly token: string }[]): void {
    const credentials = this.ctx.maybe(CredentialsKey);
    for (const grant of grants) credentials?.addSecret(this.ctx, grant.token);
  }

  #running(): WsServer {
    if (this.#server === undefined) {
      throw new TypeError("Cannot use the ws service: it has not started");
    }
    return this.#server;
  }
}
