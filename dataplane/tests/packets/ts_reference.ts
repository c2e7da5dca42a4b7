/**
 * The TypeScript side of the packet tests' GLBD v3 checks (packages/forwarding, the code the
 * console and the agent run): turns a v2 file into v3 with per-table hash fields, and explains
 * flows on the v3 file with explainFlow's default (each table's own fields).
 *
 *   tsx ts_reference.ts < request.json > reply.json
 *   request: {"v2": path, "v3": path, "tables": [{"hashFields": [...], "altHashFields": [...]}],
 *             "flows": [{"table": i, "srcAddr", "srcPort", "dstAddr", "dstPort"}]}
 *   reply:   {"contentHashes": [sha256 of each table as a 1-table file], "explains": [...]}
 */
import { readFileSync, writeFileSync } from "node:fs";
import { decodeGlbd, encodeGlbd, explainFlow, tableContentHash, type HashField } from "@tide/forwarding";

interface Request {
  v2: string;
  v3: string;
  tables: { hashFields: HashField[]; altHashFields: HashField[] }[];
  flows: { table: number; srcAddr: string; srcPort: number; dstAddr: string; dstPort: number }[];
}

const req = JSON.parse(readFileSync(0, "utf8")) as Request;
const v2 = decodeGlbd(new Uint8Array(readFileSync(req.v2)));
if (v2.length !== req.tables.length) throw new Error(`${req.v2} has ${v2.length} tables, request ${req.tables.length}`);
writeFileSync(req.v3, encodeGlbd(v2.map((t, i) => ({ ...t, ...req.tables[i]! }))));
// Decoded again: the explanations come from what the file says, not from the request.
const v3 = decodeGlbd(new Uint8Array(readFileSync(req.v3)));
process.stdout.write(
  JSON.stringify({
    contentHashes: v3.map((t) => tableContentHash(encodeGlbd([t]))),
    explains: req.flows.map(({ table, ...flow }) => ({
      hashFields: v3[table]!.hashFields,
      ...explainFlow(v3[table]!, flow),
    })),
  }),
);
