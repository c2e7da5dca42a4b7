import { resolve } from "node:path";
import {
  AssignError,
  buildTable,
  encodeGlbd,
  GlbConfigError,
  parseGlbConfigJson,
  tableContentHash,
  type Variant,
} from "@tide/forwarding";
import { writeFileAtomic } from "../../atomic-write";
import { CommandError, EXIT_OK, UsageError, type CliIo, type Command } from "../../cli-io";
import { parseOptions } from "../../parse-options";
import { readInput } from "../../table-files";

export const buildCommand: Command = {
  name: "build",
  usage: `Usage: tidectl table build <glb.json> <out.bin> [--variant tide|glb]

Reads glb-director's forwarding table JSON and writes a GLBD v2 binary table file.
The output is written atomically (temp file + fsync + rename); on any error it is left untouched.

Options:
  --variant tide|glb  row rules: "tide" (default) or "glb" (byte-identical to glb-director)
  -h, --help          show this help
`,
  async run(args: string[], io: CliIo): Promise<number> {
    const { values, positionals } = parseOptions(args, { variant: { type: "string" } });
    if (values.help) {
      io.stdout(this.usage);
      return EXIT_OK;
    }
    if (positionals.length !== 2)
      throw new UsageError(`expected <glb.json> <out.bin>, got ${positionals.length} argument(s)`);
    const [input, output] = positionals as [string, string];
    const variant = (values.variant ?? "tide") as string;
    if (variant !== "tide" && variant !== "glb")
      throw new UsageError(`--variant must be "tide" or "glb", got ${JSON.stringify(variant)}`);

    const text = Buffer.from(readInput(io.cwd, input, "JSON file")).toString("utf8");
    let bytes: Uint8Array;
    try {
      const specs = parseGlbConfigJson(text);
      bytes = encodeGlbd(specs.map((spec) => buildTable(spec, { variant: variant as Variant })));
    } catch (e) {
      if (e instanceof GlbConfigError)
        throw new CommandError(`${input}: invalid glb table JSON: ${e.message}`);
      if (e instanceof AssignError || e instanceof RangeError)
        throw new CommandError(`${input}: cannot build: ${e.message}`);
      throw e;
    }
    try {
      writeFileAtomic(resolve(io.cwd, output), bytes);
    } catch (e) {
      throw new CommandError(`cannot write ${output}: ${e instanceof Error ? e.message : String(e)}`);
    }
    const tables = new DataView(bytes.buffer).getUint32(8, true);
    io.stdout(
      `wrote ${output}: ${tables} table(s), ${bytes.length} bytes, sha256 ${tableContentHash(bytes)} (variant ${variant})\n`,
    );
    return EXIT_OK;
  },
};
