import { type CommandGroup } from "../../cli-io";
import { buildCommand } from "./build";
import { diffCommand } from "./diff";
import { explainCommand } from "./explain";
import { showCommand } from "./show";

/** Offline table tools: they read and write files only, no API. */
export const tableGroup: CommandGroup = {
  name: "table",
  summary: "build, inspect and compare GLBD forwarding table files (offline)",
  commands: [buildCommand, explainCommand, diffCommand, showCommand],
};
