/**
 * Every command group and command with its one-line summary: all that `tidectl --help`, a group's
 * help and an unknown-command error print. This file is in the bundle's entry and imports no
 * command: each group's code is a dynamic import (a chunk of its own in dist/tidectl-chunks/),
 * loaded only when one of its commands runs. So help and usage errors parse no table code
 * (@tide/forwarding, ~55 KB) and no API client, and start about as fast as bare node (issue 28).
 * The summaries live here only; apiCommand reads its command's from here for the usage text.
 */
import { type Command } from "../cli-io";

export interface GroupListing {
  name: string;
  summary: string;
  /** Command name -> one-line summary, in help order. */
  commands: Readonly<Record<string, string>>;
  /** The group's commands, in the same order (listing.test.ts checks names and order). */
  load(): Promise<Command[]>;
}

/** Command groups: offline table tools, then the REST API groups. */
export const groups: readonly GroupListing[] = [
  {
    name: "table",
    summary: "build, inspect and compare GLBD forwarding table files (offline)",
    commands: {
      build: "build a GLBD v2 table file from glb-director JSON",
      explain: "show which row and proxies a flow maps to",
      diff: "compare two table files: rows, per-proxy shares, hash key/fields, binds, backends",
      show: "print a table file's header, backends (with row shares) and binds",
    },
    load: async () => (await import("./table/index")).tableCommands,
  },
  {
    name: "pool",
    summary: "pools over the REST API (names or pool_… ids)",
    commands: {
      list: "list pools with binds, proxy counts and table version",
      show: "a pool with its proxies and directors",
      create: "create a pool (no proxies, no table until its first proxy)",
      edit: "rename or re-describe a pool (no table change)",
      binds: "show a pool's binds, or replace them with --bind …",
      "hash-fields": "show, preview or set the fields hashed to pick a row",
      delete: "delete a pool and its proxies (the API refuses while a director serves it)",
    },
    load: async () => (await import("./pool/index")).poolCommands,
  },
  {
    name: "proxy",
    summary: "proxies over the REST API (host names, addresses or prx_… ids)",
    commands: {
      add: "add a proxy to a pool (active while the pool carries no traffic, else inactive: fill it)",
      remove: "remove an inactive proxy from its pool",
      drain: "stop new flows to an active proxy (its flows finish on the second hop)",
      deactivate: "take a draining proxy out of the table (cuts the connections it still has)",
      fill: "bring an inactive proxy back as filling (new flows, second hop kept)",
      activate: "make a filling proxy active",
      abort: "abort the drain or fill in progress (draining -> active, filling -> inactive)",
    },
    load: async () => (await import("./proxy/index")).proxyCommands,
  },
  {
    name: "version",
    summary: "a pool's table versions and their change reports over the REST API",
    commands: {
      list: "a pool's table versions, newest first, with what each did to its connections",
      report: "what a change did to the pool's connections (its version's change report)",
    },
    load: async () => (await import("./version/index")).versionCommands,
  },
  {
    name: "director",
    summary: "directors over the REST API (host names or dir_… ids)",
    commands: {
      list: "list directors and the pools they serve",
      register: "register a director by the host name its agent reports",
      assign: "make a director serve a pool",
      unassign: "stop a director serving a pool",
      remove: "remove a director",
    },
    load: async () => (await import("./director/index")).directorCommands,
  },
  {
    name: "host",
    summary: "hosts over the REST API: enroll (a one-time token), list, remove (admin scope)",
    commands: {
      add: "make a one-time enrollment token and print the command to run on the host",
      list: "list hosts with their roles and when their agent was last heard",
      remove: "remove a host: its host tokens stop working at once",
      tokens: "list enrollment tokens (newest first) with their state",
      revoke: "revoke a pending enrollment token",
    },
    load: async () => (await import("./host/index")).hostCommands,
  },
  {
    name: "user",
    summary: "console users over the REST API (emails or usr_… ids; admin scope)",
    commands: {
      list: "list users with role and status",
      create: "create a user (a generated password is printed once)",
      role: "change a user's role",
      disable: "disable a user: sign-in refused, sessions ended, their API tokens stop working",
      enable: "enable a disabled user (their unrevoked tokens work again)",
      "reset-password": "set a new password (generated unless --password-file) and end the user's sessions",
    },
    load: async () => (await import("./user/index")).userCommands,
  },
];

/** A listed command's summary; throws for one missing here (a group's module loads with it). */
export function commandSummary(group: string, name: string): string {
  const summary = groups.find((g) => g.name === group)?.commands[name];
  if (summary === undefined) throw new Error(`tidectl: "${group} ${name}" is not in commands/listing.ts`);
  return summary;
}
