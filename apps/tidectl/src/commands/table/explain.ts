import {
  AddressError,
  explainFlow,
  FlowError,
  normalizeHashFields,
  parseEndpoint,
  type Flow,
  type HashField,
} from "@tide/forwarding";
import { EXIT_OK, UsageError, type CliIo, type Command } from "../../cli-io";
import { parseIndex, parseOptions } from "../../parse-options";
import { columns, pickTable, readTables } from "../../table-files";

function endpoint(option: string, text: string): { address: string; port?: number } {
  try {
    return parseEndpoint(text);
  } catch (e) {
    if (e instanceof AddressError) throw new UsageError(`--${option}: ${e.message}`);
    throw e;
  }
}

export const explainCommand: Command = {
  name: "explain",
  usage: `Usage: tidectl table explain <table.bin> --src ADDR[:PORT] [--dst ADDR[:PORT]] [--table N]
                             [--fields src_addr,dst_addr,src_port,dst_port] [--json]

Hashes the flow with the table's hash key and prints its row, primary and secondary proxy
and the outer UDP source port of the GUE packet. IPv6 with a port: [2001:db8::1]:443.

Options:
  --src ADDR[:PORT]  client address (and source port)
  --dst ADDR[:PORT]  VIP address (and destination port), needed for dst_* fields
  --table N          table index in the file (default 0)
  --fields LIST      hash fields, comma separated (default: the table's own, from a GLBD v3
                     file; src_addr for a v2 file)
  --json             print JSON
  -h, --help         show this help
`,
  async run(args: string[], io: CliIo): Promise<number> {
    const { values, positionals } = parseOptions(args, {
      src: { type: "string" },
      dst: { type: "string" },
      table: { type: "string" },
      fields: { type: "string" },
      json: { type: "boolean" },
    });
    if (values.help) {
      io.stdout(this.usage);
      return EXIT_OK;
    }
    if (positionals.length !== 1)
      throw new UsageError(`expected one <table.bin>, got ${positionals.length} argument(s)`);
    if (values.src === undefined) throw new UsageError("--src is required");
    const path = positionals[0]!;
    const tableIndex = parseIndex("table", values.table, 0);
    const src = endpoint("src", values.src);
    const dst = values.dst === undefined ? undefined : endpoint("dst", values.dst);
    let given: HashField[] | undefined;
    try {
      given =
        values.fields === undefined
          ? undefined
          : normalizeHashFields(values.fields.split(",").map((f) => f.trim()));
    } catch (e) {
      throw new UsageError(`--fields: ${e instanceof Error ? e.message : String(e)}`);
    }
    const flow: Flow = { srcAddr: src.address, srcPort: src.port, dstAddr: dst?.address, dstPort: dst?.port };
    const table = pickTable(readTables(io.cwd, path), tableIndex, path);
    // A v3 table says what it is hashed on; a v2 table (glb-director's) does not: src_addr, GLB's default.
    const fields: HashField[] = given ?? table.hashFields ?? ["src_addr"];
    let result;
    try {
      result = explainFlow(table, flow, fields);
    } catch (e) {
      if (e instanceof FlowError) throw new UsageError(e.message);
      throw e;
    }
    if (values.json) {
      io.stdout(`${JSON.stringify({ table: tableIndex, fields, ...flow, ...result }, null, 2)}\n`);
      return EXIT_OK;
    }
    io.stdout(
      columns([
        ["table", String(tableIndex)],
        ["fields", fields.join(",")],
        ["digest", `0x${result.digest}`],
        ["row", `${result.row} (0x${result.row.toString(16).padStart(4, "0")})`],
        ["primary", result.primary],
        ["secondary", result.secondary],
        [
          "outer source port",
          `${result.outerSourcePort}${src.port === undefined ? " (client port taken as 0)" : ""}`,
        ],
      ]),
    );
    return EXIT_OK;
  },
};
