import { type Command } from "../../cli-io";
import { buildCommand } from "./build";
import { diffCommand } from "./diff";
import { explainCommand } from "./explain";
import { showCommand } from "./show";

/** Offline table tools: they read and write files only, no API. Loaded by commands/listing.ts. */
export const tableCommands: Command[] = [buildCommand, explainCommand, diffCommand, showCommand];
