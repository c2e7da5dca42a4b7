import { readInput } from "../../table-files";
import { decodeGlbd, GlbdFormatError, tableContentHash, TABLE_ROWS } from "@tide/forwarding";
import { CommandError, EXIT_OK, UsageError, type CliIo, type Command } from "../../cli-io";
import { parseOptions } from "../../parse-options";
import { columns, percent } from "../../table-files";

export const showCommand: Command = {
  name: "show",
  usage: `Usage: tidectl table show <table.bin> [--json]

Options:
  --json      print JSON (rows summarised as per-backend counts)
  -h, --help  show this help
`,
  async run(args: string[], io: CliIo): Promise<number> {
    const { values, positionals } = parseOptions(args, { json: { type: "boolean" } });
    if (values.help) {
      io.stdout(this.usage);
      return EXIT_OK;
    }
    if (positionals.length !== 1)
      throw new UsageError(`expected one <table.bin>, got ${positionals.length} argument(s)`);
    const path = positionals[0]!;
    const bytes = readInput(io.cwd, path, "table file");
    let tables;
    try {
      tables = decodeGlbd(bytes);
    } catch (e) {
      if (e instanceof GlbdFormatError)
        throw new CommandError(`${path}: not a valid GLBD table file: ${e.message} [${e.code}]`);
      throw e;
    }
    const summary = tables.map((t, index) => {
      const primary = new Array<number>(t.backends.length).fill(0);
      const secondary = new Array<number>(t.backends.length).fill(0);
      for (let r = 0; r < TABLE_ROWS; r++) {
        primary[t.primary[r]!]!++;
        secondary[t.secondary[r]!]!++;
      }
      return {
        index,
        hashKey: Buffer.from(t.hashKey).toString("hex"),
        backends: t.backends.map((b, i) => ({
          ...b,
          primaryRows: primary[i]!,
          secondaryRows: secondary[i]!,
        })),
        binds: t.binds,
        // A v2 table does not say: the director hashes it on its configured default fields.
        hashFields: t.hashFields ?? null,
        altHashFields: t.altHashFields ?? null,
      };
    });
    const sha256 = tableContentHash(bytes);
    // The header's second u32 (little-endian) is the format version; decodeGlbd checked it.
    const format = `GLBD v${new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength).getUint32(4, true)}`;
    if (values.json) {
      io.stdout(
        `${JSON.stringify({ file: path, bytes: bytes.length, sha256, format, tables: summary }, null, 2)}\n`,
      );
      return EXIT_OK;
    }
    io.stdout(`${path}: ${format}, ${tables.length} table(s), ${bytes.length} bytes, sha256 ${sha256}\n`);
    for (const t of summary) {
      io.stdout(
        `\ntable ${t.index}: hash key ${t.hashKey}, ${t.backends.length} backend(s), ${t.binds.length} bind(s), ` +
          `hash fields ${t.hashFields ? t.hashFields.join(",") : "not stored (director default)"}` +
          `${t.altHashFields && t.altHashFields.length > 0 ? `, alternate ${t.altHashFields.join(",")}` : ""}\n`,
      );
      io.stdout(
        columns([
          ["slot", "backend", "state", "healthy", "primary", "secondary"],
          ...t.backends.map((b, i) => [
            String(i),
            b.address,
            b.state,
            b.healthy ? "yes" : "no",
            `${b.primaryRows} ${percent(b.primaryRows / TABLE_ROWS)}`,
            `${b.secondaryRows} ${percent(b.secondaryRows / TABLE_ROWS)}`,
          ]),
        ]),
      );
      io.stdout(
        columns([
          ["bind", "proto", "ports"],
          ...t.binds.map((b) => [
            `${b.address}/${b.prefixBits}`,
            b.proto,
            b.portStart === b.portEnd ? String(b.portStart) : `${b.portStart}-${b.portEnd}`,
          ]),
        ]),
      );
    }
    return EXIT_OK;
  },
};
