/**
 * The parts of the API's replies the readable output uses (the full schemas live in
 * @tide/contracts; --json prints replies unchanged, so fields not listed here still reach scripts).
 */
export interface BindReply {
  address: string;
  prefixBits: number;
  proto: string;
  portStart: number;
  portEnd: number;
}

export interface TableVersionReply {
  id: string;
  version: number;
  reason: string;
  cause: string;
}

export interface ProxyReply {
  id: string;
  poolId: string;
  address: string;
  hostname: string;
  state: string;
  health: { healthy: boolean; reason: string };
  slot: number;
}

export interface PoolSummaryReply {
  id: string;
  name: string;
  description: string;
  hashFields: string[];
  /** A hash-field change still migrating; absent from consoles before it. */
  hashMigration?: { from: string[]; to: string[]; startedAt: string } | null;
  binds: BindReply[];
  proxyCounts: { active: number; draining: number; inactive: number; filling: number; unhealthy: number };
  directorIds: string[];
  currentVersion: TableVersionReply | null;
}

export interface PoolDetailReply extends PoolSummaryReply {
  proxies: ProxyReply[];
  directors: { id: string; hostname: string }[];
}

export interface PoolChangeReply {
  pool: PoolDetailReply;
  tableVersion: TableVersionReply | null;
}

export interface HashFieldsPreviewReply {
  from: string[];
  to: string[];
  sampleFlows: number;
  flowsMoved: number;
  fractionMoved: number | null;
  /** The change keeps established connections (the old fields stay as the alternate hash). */
  migrates?: boolean;
  /** Why it would be refused now (a migration in progress). */
  refusal?: string | null;
}

export interface DirectorReply {
  id: string;
  hostname: string;
  poolIds: string[];
  pools?: { id: string; name: string }[];
}

export interface UserReply {
  id: string;
  email: string;
  name: string;
  role: string;
  createdAt: string;
  disabledAt: string | null;
}

export interface HostReply {
  id: string;
  name: string;
  roles: string[];
  agentVersion: string | null;
  lastSeenAt: string | null;
  health: { worstSeverity: string | null; openFindings: number; stale: boolean };
}

export interface EnrollmentTokenReply {
  id: string;
  prefix: string;
  hostname: string;
  roles: string[];
  state: string;
  createdBy: string;
  createdAt: string;
  expiresAt: string;
  usedAt: string | null;
  revokedAt: string | null;
}

export interface EnrollmentTokenCreatedReply {
  token: string;
  command: string;
  summary: EnrollmentTokenReply;
}
