import { statSync } from "node:fs";
import type { BpfMapRef, NodeBpf } from "./node-bpf";

export const errnoText = (err: unknown): string => (err instanceof Error ? err.message : String(err));

/** The shape a pinned map must have (a PERCPU_ARRAY with u32 keys) and what it is, for messages. */
export interface PerCpuArrayLayout {
  valueSize: number;
  maxEntries: number;
  /** "tide-redirect's stats map": says in an error which map was expected. */
  what: string;
}

/**
 * A pinned BPF_MAP_TYPE_PERCPU_ARRAY read through the npm `bpf` module: the fd stays open between
 * reads and is reopened when the pin is replaced (a restarted daemon pins a new map: new inode). A
 * map of another shape is refused with what it is and what was wanted.
 */
export class PinnedPerCpuArray {
  private ref: BpfMapRef | null = null;
  private inode = 0;

  constructor(
    private readonly bpf: NodeBpf,
    readonly pinPath: string,
    private readonly layout: PerCpuArrayLayout,
  ) {}

  /** The open map, and whether it was (re)opened by this call; throws with the reason. */
  open(): { ref: BpfMapRef; reopened: boolean } {
    let ino: number;
    try {
      ino = statSync(this.pinPath).ino;
    } catch (err) {
      this.close();
      throw new Error(`no pinned map: ${errnoText(err)}`);
    }
    if (this.ref !== null && ino === this.inode) return { ref: this.ref, reopened: false };
    this.close();
    let ref: BpfMapRef;
    try {
      ref = this.bpf.createMapRef(this.bpf.objGet(this.pinPath), { transfer: true });
    } catch (err) {
      throw new Error(`bpf_obj_get ${this.pinPath}: ${errnoText(err)}`);
    }
    const l = this.layout;
    if (
      ref.type !== this.bpf.MapType.PERCPU_ARRAY ||
      ref.keySize !== 4 ||
      ref.valueSize !== l.valueSize ||
      ref.maxEntries !== l.maxEntries
    ) {
      ref.close();
      throw new Error(
        `${this.pinPath} is not ${l.what} (type ${ref.type}, key ${ref.keySize} B, value ${ref.valueSize} B, ` +
          `${ref.maxEntries} entries; want PERCPU_ARRAY, 4 B, ${l.valueSize} B, ${l.maxEntries})`,
      );
    }
    this.ref = ref;
    this.inode = ino;
    return { ref, reopened: true };
  }

  close(): void {
    this.ref?.close();
    this.ref = null;
    this.inode = 0;
  }
}
