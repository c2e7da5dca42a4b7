import { z } from "zod";
import { ESTABLISHED_MAX_ENDPOINTS } from "./observations";

/**
 * tide-nsdiag's wire format (dataplane/nsdiag/tide_nsdiag.c): the agent runs one tide-nsdiag and talks
 * newline-delimited JSON over its stdin/stdout, one object per line, at most NSDIAG_MAX_LINE_BYTES.
 *
 *   first line out:  NsdiagHello
 *   each line in:    NsdiagRequest
 *   each line out:   NsdiagReply with the request's id (one NsdiagNamespace per requested
 *                    namespace), or NsdiagErrorReply for a malformed request
 *
 * Field names are snake_case because they are the wire names. NsdiagReplyEnvelope is NsdiagReply with
 * its entries unchecked: the agent checks each entry against NsdiagNamespace on its own, so one bad
 * entry costs only its namespace, not the whole reply.
 */
export const NSDIAG_MAX_LINE_BYTES = 1 << 20;

/** Listeners listed per namespace (MAX_LISTENERS; ports stays complete). */
export const NSDIAG_MAX_LISTENERS = 4096;

/** Namespaces per request (MAX_NAMESPACES); the rest get state "error". */
export const NSDIAG_MAX_NAMESPACES = 4096;

const Inode = z.int().min(1).describe("The network namespace's inode");
const Port = z.int().min(0).max(65535);
const Count = z.int().min(0);
const RequestId = z.int().min(0).describe("Chosen by the agent; echoed in the reply");

export const NsdiagTargetWire = z
  .strictObject({
    inode: Inode,
    path: z
      .string()
      .min(1)
      .nullable()
      .describe("Where to open it (/run/netns/web, /proc/<pid>/ns/net); null = tide-nsdiag's own namespace"),
  })
  .describe("One namespace to sample");
export type NsdiagTargetWire = z.infer<typeof NsdiagTargetWire>;

export const NsdiagRequest = z
  .strictObject({
    id: RequestId,
    sysctls: z.boolean().describe("Also read the sysctl files"),
    ns: z
      .array(NsdiagTargetWire)
      .max(NSDIAG_MAX_NAMESPACES)
      .describe("The namespaces to sample; any it holds that are not listed are closed"),
  })
  .describe("One request: sample these namespaces");
export type NsdiagRequest = z.infer<typeof NsdiagRequest>;

export const NsdiagListener = z
  .tuple([
    z.string().min(1).max(64).describe('Local address ("127.0.0.1", "::", "*")'),
    Port.describe("Local port"),
    Count.describe("Accept queue (ss Recv-Q)"),
    Count.describe("Effective backlog (ss Send-Q)"),
  ])
  .describe("One LISTEN socket: [address, port, accept queue, effective backlog]");
export type NsdiagListener = z.infer<typeof NsdiagListener>;

export const NsdiagPortCount = z
  .tuple([Port.describe("Local port"), Count.describe("LISTEN sockets on it")])
  .describe("[port, LISTEN sockets]");
export type NsdiagPortCount = z.infer<typeof NsdiagPortCount>;

export const NsdiagEstablished = z
  .tuple([
    z.string().min(1).max(45).describe("Local address (an IPv4-mapped IPv6 address as its IPv4 address)"),
    Port.describe("Local port"),
    Count.describe("ESTABLISHED sockets on it"),
  ])
  .describe("[local address, local port, ESTABLISHED sockets]");
export type NsdiagEstablished = z.infer<typeof NsdiagEstablished>;

const FileText = z.string().nullable().describe("The file's text (at most 64 KiB), null when unreadable");

export const NsdiagNamespaceOk = z
  .object({
    inode: Inode,
    state: z.literal("ok"),
    listeners: z.array(NsdiagListener).max(NSDIAG_MAX_LISTENERS).describe("LISTEN sockets, at most 4096"),
    listeners_total: Count.describe("Every LISTEN socket of the namespace"),
    ports: z.array(NsdiagPortCount).describe("LISTEN sockets per port, complete"),
    established: z
      .array(NsdiagEstablished)
      .max(ESTABLISHED_MAX_ENDPOINTS)
      .optional()
      .describe("The 256 busiest local address:ports by count; absent from an older tide-nsdiag"),
    established_total: Count.optional().describe(
      "Every ESTABLISHED socket of the namespace; absent from an older tide-nsdiag",
    ),
    sysctls: z
      .record(z.string(), z.string())
      .optional()
      .describe(
        'Raw sysctl texts keyed by path under /proc/sys ("net/core/somaxconn"); absent when not asked',
      ),
    netstat: FileText.optional().describe("/proc/net/netstat"),
    snmp: FileText.optional().describe("/proc/net/snmp"),
    sockstat: FileText.optional().describe("/proc/net/sockstat"),
  })
  .describe("A namespace that was sampled");
export type NsdiagNamespaceOk = z.infer<typeof NsdiagNamespaceOk>;

export const NsdiagNamespaceFailed = z
  .object({
    inode: Inode,
    state: z
      .enum(["gone", "error"])
      .describe("gone: its path vanished or names another namespace; error: it could not be sampled"),
    error: z.string().describe("Why, in words"),
  })
  .describe("A namespace that could not be sampled");
export type NsdiagNamespaceFailed = z.infer<typeof NsdiagNamespaceFailed>;

export const NsdiagNamespace = z
  .discriminatedUnion("state", [NsdiagNamespaceOk, NsdiagNamespaceFailed])
  .describe("One namespace of a reply");
export type NsdiagNamespace = z.infer<typeof NsdiagNamespace>;

export const NsdiagReply = z
  .object({
    id: RequestId,
    ns: z.array(NsdiagNamespace).describe("One entry per requested namespace"),
  })
  .describe("The answer to one request");
export type NsdiagReply = z.infer<typeof NsdiagReply>;

/** NsdiagReply with its entries left to check one by one (see the module comment). */
export const NsdiagReplyEnvelope = NsdiagReply.extend({
  ns: z.array(z.unknown()).describe("Entries to check against NsdiagNamespace one by one"),
});
export type NsdiagReplyEnvelope = z.infer<typeof NsdiagReplyEnvelope>;

export const NsdiagErrorReply = z
  .object({
    id: RequestId.nullable().describe("The request's id; null when it could not be read"),
    error: z.string().describe('What was wrong with the request ("request line too long", ...)'),
  })
  .describe("A malformed request's answer");
export type NsdiagErrorReply = z.infer<typeof NsdiagErrorReply>;

export const NsdiagHello = z
  .object({
    type: z.literal("hello"),
    version: z.string().describe("The release version tide-nsdiag was built as"),
    netns: Inode.describe("The inode of its own namespace (path null in a request)"),
  })
  .describe("The first line tide-nsdiag writes");
export type NsdiagHello = z.infer<typeof NsdiagHello>;

export const NsdiagLine = z
  .union([NsdiagHello, NsdiagErrorReply, NsdiagReplyEnvelope])
  .describe("One line tide-nsdiag writes on stdout");
export type NsdiagLine = z.infer<typeof NsdiagLine>;
