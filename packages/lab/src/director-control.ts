/**
 * A typed client for a tide-director control socket: every reply is parsed with the contract's
 * schema for its command (packages/contracts/src/director-control.ts), and a failed reply becomes a
 * LabError("control_error") carrying the director's error code.
 */
import {
  directorControlReplies,
  type DirectorControlCommand,
  type DirectorControlRequest,
  type DirectorControlResultFor,
  type DirectorExplainRequest,
} from "@tide/contracts";
import { ControlSocket, CONTROL_TIMEOUT_MS } from "./control-socket";
import { LabError } from "./errors";

type ArgsOf<C extends DirectorControlCommand> = Omit<
  Extract<DirectorControlRequest, { cmd: C }>,
  "cmd" | "id"
>;

export class DirectorControl {
  readonly name: string;
  private readonly socket: ControlSocket;
  private nextId = 1;

  constructor(name: string, socketPath: string) {
    this.name = name;
    this.socket = new ControlSocket(socketPath);
  }

  get socketPath(): string {
    return this.socket.path;
  }

  async call<C extends DirectorControlCommand>(
    cmd: C,
    args: ArgsOf<C>,
    timeoutMs = CONTROL_TIMEOUT_MS,
  ): Promise<DirectorControlResultFor<C>> {
    const id = this.nextId++;
    const raw = await this.socket.request({ id, cmd, ...args }, timeoutMs);
    const parsed = directorControlReplies[cmd].safeParse(raw);
    if (!parsed.success) {
      throw new LabError("control_error", `${this.name} ${cmd}: reply does not match the contract`, {
        issues: parsed.error.issues,
        reply: raw,
      });
    }
    const reply = parsed.data;
    if (!reply.ok) {
      throw new LabError(
        "control_error",
        `${this.name} ${cmd}: ${reply.error.code}: ${reply.error.message}`,
        {
          director: this.name,
          error: reply.error,
        },
      );
    }
    return reply.result as DirectorControlResultFor<C>;
  }

  status() {
    return this.call("status", {});
  }

  stats() {
    return this.call("stats", {});
  }

  loadTable(path: string, poolNames?: string[]) {
    return this.call("load_table", poolNames ? { path, pool_names: poolNames } : { path });
  }

  explain(flow: Omit<DirectorExplainRequest, "cmd" | "id">) {
    return this.call("explain", flow);
  }

  setGateway(mac: string, sourceIp: string) {
    return this.call("set_gateway", { mac, source_ip: sourceIp });
  }

  close(): void {
    this.socket.close();
  }
}
