import { diffTables, type TableDiff } from "@tide/forwarding";
import { EXIT_OK, UsageError, type CliIo, type Command } from "../../cli-io";
import { parseIndex, parseOptions } from "../../parse-options";
import { columns, percent, pickTable, readTables } from "../../table-files";

export function diffToJson(d: TableDiff, withRows: boolean): unknown {
  return {
    rows: d.rows,
    primaryChanged: {
      count: d.primaryChanged.count,
      ...(withRows ? { rows: Array.from(d.primaryChanged.rows) } : {}),
    },
    secondaryChanged: {
      count: d.secondaryChanged.count,
      ...(withRows ? { rows: Array.from(d.secondaryChanged.rows) } : {}),
    },
    proxies: d.proxies,
  };
}

export const diffCommand: Command = {
  name: "diff",
  summary: "compare two table files row by row and per proxy",
  usage: `Usage: tidectl table diff <a.bin> <b.bin> [--table N] [--json] [--rows]

Counts the rows whose primary / secondary proxy differs (proxies matched by address) and
shows each proxy's share of primary and secondary rows before and after.

Options:
  --table N   compare table N of both files (default: every table)
  --json      print JSON
  --rows      with --json: include the changed row numbers
  -h, --help  show this help
`,
  async run(args: string[], io: CliIo): Promise<number> {
    const { values, positionals } = parseOptions(args, {
      table: { type: "string" },
      json: { type: "boolean" },
      rows: { type: "boolean" },
    });
    if (values.help) {
      io.stdout(this.usage);
      return EXIT_OK;
    }
    if (positionals.length !== 2)
      throw new UsageError(`expected <a.bin> <b.bin>, got ${positionals.length} argument(s)`);
    const [pathA, pathB] = positionals as [string, string];
    const a = await readTables(io.cwd, pathA);
    const b = await readTables(io.cwd, pathB);
    let indexes: number[];
    if (values.table !== undefined) {
      const i = parseIndex("table", values.table, 0);
      pickTable(a, i, pathA);
      pickTable(b, i, pathB);
      indexes = [i];
    } else {
      if (a.length !== b.length)
        throw new UsageError(
          `${pathA} has ${a.length} tables, ${pathB} has ${b.length}; pick one with --table`,
        );
      indexes = a.map((_, i) => i);
    }
    const diffs = indexes.map((i) => ({ table: i, diff: diffTables(a[i]!, b[i]!) }));
    if (values.json) {
      io.stdout(
        `${JSON.stringify(
          diffs.map(({ table, diff }) => ({ table, ...(diffToJson(diff, values.rows === true) as object) })),
          null,
          2,
        )}\n`,
      );
      return EXIT_OK;
    }
    for (const { table, diff } of diffs) {
      io.stdout(
        `table ${table}: primary changed in ${diff.primaryChanged.count} of ${diff.rows} rows (${percent(diff.primaryChanged.count / diff.rows)}), ` +
          `secondary changed in ${diff.secondaryChanged.count} (${percent(diff.secondaryChanged.count / diff.rows)})\n`,
      );
      const fmt = (n: number | undefined, f: number | undefined) =>
        n === undefined ? "-" : `${n} ${percent(f ?? 0)}`;
      io.stdout(
        columns([
          ["proxy", "primary before", "primary after", "secondary before", "secondary after"],
          ...diff.proxies.map((p) => [
            p.address,
            fmt(p.before?.primary, p.before?.primaryFraction),
            fmt(p.after?.primary, p.after?.primaryFraction),
            fmt(p.before?.secondary, p.before?.secondaryFraction),
            fmt(p.after?.secondary, p.after?.secondaryFraction),
          ]),
        ]),
      );
    }
    return EXIT_OK;
  },
};
