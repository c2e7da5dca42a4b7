import { diffTableFiles, diffTables, type BackendStatusChange, type TableDiff } from "@tide/forwarding";
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
    hashKeyChanged: d.hashKeyChanged,
    hashFields: d.hashFields,
    altHashFields: d.altHashFields,
    flowsMoved: d.flowsMoved,
    binds: d.binds,
    backends: d.backends,
    statusChanges: d.statusChanges,
    proxies: d.proxies,
  };
}

const status = (s: BackendStatusChange["before"]) => `${s.state}, ${s.healthy ? "healthy" : "unhealthy"}`;
const fieldList = (f: readonly string[] | null) => (f === null ? "none" : f.join(","));

/** The lines that say what changed besides rows; empty when nothing did. */
export function diffSummaryLines(d: TableDiff): string[] {
  const lines: string[] = [];
  const moved = d.flowsMoved
    ? `about ${percent(d.flowsMoved.fraction)} of flows change primary proxy ` +
      `(${d.flowsMoved.moved} of ${d.flowsMoved.sampled} sampled client flows)`
    : "";
  if (d.hashKeyChanged)
    lines.push(`hash key changed: flows move to other rows even where no row changed; ${moved}`);
  if (d.hashFields.changed)
    lines.push(
      `hash fields changed: ${fieldList(d.hashFields.before)} -> ${fieldList(d.hashFields.after)}; ` +
        (d.hashKeyChanged ? "flows move (see above)" : `flows move to other rows; ${moved}`),
    );
  if (d.altHashFields.changed)
    lines.push(
      `alternate hash fields changed: ${fieldList(d.altHashFields.before)} -> ${fieldList(d.altHashFields.after)} ` +
        `(second-chance hops only; primaries do not move)`,
    );
  for (const b of d.binds.added) lines.push(`bind added: ${b}`);
  for (const b of d.binds.removed) lines.push(`bind removed: ${b}`);
  for (const a of d.backends.added) lines.push(`backend added: ${a}`);
  for (const a of d.backends.removed) lines.push(`backend removed: ${a}`);
  for (const c of d.statusChanges)
    lines.push(
      `backend ${c.address}: ${status(c.before)} -> ${status(c.after)} ` +
        (c.primaryRowsChanged === 0
          ? "(moves no rows)"
          : `(${c.primaryRowsChanged} rows change primary to or from it)`),
    );
  return lines;
}

export const diffCommand: Command = {
  name: "diff",
  usage: `Usage: tidectl table diff <a.bin> <b.bin> [--table N] [--json] [--rows]

Counts the rows whose primary / secondary proxy differs (proxies matched by address) and
shows each proxy's share of primary and secondary rows before and after. It also reports
what moves flows without changing a row, and what changes without moving anything:
  - a new hash key or new hash fields: nearly every flow hashes to another row. The share of
    flows that change primary proxy is estimated from a fixed sample of 10,000 client flows.
  - binds added / removed, backends added / removed, backend state or health changes (also
    those that move no rows, e.g. a proxy marked unhealthy where it is nowhere primary).
  - the number of tables, when the files differ (tables are compared by index).
The rendezvous seed is not stored in a table file, so a seed change cannot be shown as
such: it appears as rows whose proxies changed.

Exit status: 0 when the files were compared (whether or not they differ), 1 when a file
cannot be read, 2 on bad usage.

Options:
  --table N   compare table N of both files (default: every table)
  --json      print JSON (an array, one element per table index)
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
    const tableIndex = values.table === undefined ? undefined : parseIndex("table", values.table, 0);
    const a = readTables(io.cwd, pathA);
    const b = readTables(io.cwd, pathB);
    let file;
    if (tableIndex !== undefined) {
      const ta = pickTable(a, tableIndex, pathA);
      const tb = pickTable(b, tableIndex, pathB);
      file = {
        tablesBefore: a.length,
        tablesAfter: b.length,
        tablesAdded: [],
        tablesRemoved: [],
        tables: [{ index: tableIndex, diff: diffTables(ta, tb) }],
      };
    } else {
      file = diffTableFiles(a, b);
    }
    if (values.json) {
      const rows = values.rows === true;
      io.stdout(
        `${JSON.stringify(
          [
            ...file.tables.map(({ index, diff }) => ({
              table: index,
              ...(diffToJson(diff, rows) as object),
            })),
            ...file.tablesAdded.map((index) => ({ table: index, only: "b", file: pathB })),
            ...file.tablesRemoved.map((index) => ({ table: index, only: "a", file: pathA })),
          ],
          null,
          2,
        )}\n`,
      );
      return EXIT_OK;
    }
    if (tableIndex === undefined && file.tablesBefore !== file.tablesAfter) {
      const only = file.tablesAdded.length > 0 ? file.tablesAdded : file.tablesRemoved;
      const where = file.tablesAdded.length > 0 ? pathB : pathA;
      io.stdout(
        `table count changed: ${file.tablesBefore} -> ${file.tablesAfter}; table(s) ${only.join(", ")} only in ${where}` +
          ` (the other tables are compared by index)\n`,
      );
    }
    for (const { index, diff } of file.tables) {
      io.stdout(
        `table ${index}: primary changed in ${diff.primaryChanged.count} of ${diff.rows} rows (${percent(diff.primaryChanged.count / diff.rows)}), ` +
          `secondary changed in ${diff.secondaryChanged.count} (${percent(diff.secondaryChanged.count / diff.rows)})\n`,
      );
      for (const line of diffSummaryLines(diff)) io.stdout(`  ${line}\n`);
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
