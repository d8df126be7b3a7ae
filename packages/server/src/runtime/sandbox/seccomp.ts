/**
 * The seccomp filter bubblewrap installs in every sandbox, runners and build steps alike
 * (`--seccomp FD`, applied after bubblewrap made its mounts, just before it execs the command):
 * a classic BPF program, as `seccomp_export_bpf` would write it.
 *
 * It refuses what a container runtime's default profile (Docker's, containerd's) refuses an
 * unprivileged container: kernel surface nothing an algorithm or a build tool needs, much of it
 * a frequent source of kernel exploits (io_uring, bpf, perf events, userfaultfd), or state kept
 * per host uid or for the whole host (the keyrings, the clock, modules, swap, mounts, quotas).
 * Most of it would fail anyway for lack of a capability; refused here it never reaches the
 * code that checks. Refused calls fail with EPERM, except where a runtime tells "not there"
 * from "refused": io_uring (libuv, and so Node, falls back to its thread pool) and clone3
 * (glibc falls back to clone, whose namespace flags are checked here) answer ENOSYS.
 *
 * Some calls are refused only with some arguments, as in Docker's profile: `clone` with a flag
 * that makes a namespace (the sandbox already has its own, and bubblewrap forbids nested user
 * namespaces), and `personality` other than the harmless personas (Linux, with or without
 * UNAME26, or a query), which could switch off address-space randomization.
 *
 * `ptrace`, `process_vm_readv/writev` and `kcmp` are refused although Docker allows them on
 * recent kernels: they only reach the sandbox's own processes, but nothing an algorithm or a
 * build needs uses them, and on kernels before 4.8 ptrace could step around a seccomp filter.
 *
 * System calls of another ABI (x86's 32-bit and x32 calls on x86_64, AArch32 on arm64) are
 * refused with ENOSYS: they would reach the same calls under other numbers.
 */

/** struct seccomp_data: nr at offset 0, arch at offset 4, args[0] (low 32 bits, little-endian) at 16. */
const OFFSET_NR = 0;
const OFFSET_ARCH = 4;
const OFFSET_ARG0_LOW = 16;
const BPF_LD_W_ABS = 0x20;
const BPF_JEQ_K = 0x15;
const BPF_JGE_K = 0x35;
const BPF_JSET_K = 0x45;
const BPF_RET_K = 0x06;
const RET_ALLOW = 0x7fff0000;
const RET_ERRNO = 0x00050000;
const EPERM = 1;
const ENOSYS = 38;
const X32_SYSCALL_BIT = 0x40000000;

/** CLONE_NEWNS | CLONE_NEWCGROUP | CLONE_NEWUTS | CLONE_NEWIPC | CLONE_NEWUSER | CLONE_NEWPID | CLONE_NEWNET. */
const CLONE_NAMESPACE_FLAGS = 0x7e020000;
/** personality(2) values Docker's profile allows: PER_LINUX, UNAME26, PER_LINUX32 (+UNAME26), and the query 0xffffffff. */
const SAFE_PERSONAS = [0x0, 0x8, 0x20000, 0x20008, 0xffffffff];

/** The calls refused with EPERM. */
const REFUSED_CALLS = [
  // kernel surface of its own
  'perf_event_open',
  'bpf',
  'userfaultfd',
  // the kernel keyrings (kept per host uid, with a quota per uid)
  'add_key',
  'request_key',
  'keyctl',
  // the kernel itself: modules, kexec, reboot, swap, accounting, the log
  'kexec_load',
  'kexec_file_load',
  'init_module',
  'finit_module',
  'delete_module',
  'create_module',
  'get_kernel_syms',
  'query_module',
  'reboot',
  'swapon',
  'swapoff',
  'acct',
  'syslog',
  'vhangup',
  '_sysctl',
  'nfsservctl',
  'uselib',
  'ustat',
  'sysfs',
  'lookup_dcookie',
  // mounts and namespaces (bubblewrap made the sandbox's before the filter applies)
  'mount',
  'umount2',
  'pivot_root',
  'fsopen',
  'fsconfig',
  'fsmount',
  'fspick',
  'move_mount',
  'open_tree',
  'mount_setattr',
  'setns',
  'unshare',
  'quotactl',
  'quotactl_fd',
  'open_by_handle_at',
  'name_to_handle_at',
  'fanotify_init',
  // the host's clock
  'settimeofday',
  'clock_settime',
  'clock_adjtime',
  'adjtimex',
  // other processes' memory
  'ptrace',
  'process_vm_readv',
  'process_vm_writev',
  'process_madvise',
  'pidfd_getfd',
  'kcmp',
  // NUMA placement (CAP_SYS_NICE in Docker's profile)
  'move_pages',
  'mbind',
  'set_mempolicy',
  'get_mempolicy',
  'set_mempolicy_home_node',
  // x86 I/O ports and unused entry points
  'iopl',
  'ioperm',
  'afs_syscall',
  'tuxcall',
  'security',
  'putpmsg',
  'getpmsg',
  'vserver',
] as const;

/** The calls that answer ENOSYS, so that runtimes fall back to what they did before them. */
const ABSENT_CALLS = ['io_uring_setup', 'io_uring_enter', 'io_uring_register', 'clone3'] as const;

type CallName = (typeof REFUSED_CALLS)[number] | (typeof ABSENT_CALLS)[number] | 'clone' | 'personality';

/** System call numbers (x86_64: asm/unistd_64.h; arm64: asm-generic/unistd.h); a call the architecture lacks is absent. */
const X64: Partial<Record<CallName, number>> = {
  io_uring_setup: 425,
  io_uring_enter: 426,
  io_uring_register: 427,
  clone3: 435,
  clone: 56,
  personality: 135,
  perf_event_open: 298,
  bpf: 321,
  userfaultfd: 323,
  add_key: 248,
  request_key: 249,
  keyctl: 250,
  kexec_load: 246,
  kexec_file_load: 320,
  init_module: 175,
  finit_module: 313,
  delete_module: 176,
  create_module: 174,
  get_kernel_syms: 177,
  query_module: 178,
  reboot: 169,
  swapon: 167,
  swapoff: 168,
  acct: 163,
  syslog: 103,
  vhangup: 153,
  _sysctl: 156,
  nfsservctl: 180,
  uselib: 134,
  ustat: 136,
  sysfs: 139,
  lookup_dcookie: 212,
  mount: 165,
  umount2: 166,
  pivot_root: 155,
  fsopen: 430,
  fsconfig: 431,
  fsmount: 432,
  fspick: 433,
  move_mount: 429,
  open_tree: 428,
  mount_setattr: 442,
  setns: 308,
  unshare: 272,
  quotactl: 179,
  quotactl_fd: 443,
  open_by_handle_at: 304,
  name_to_handle_at: 303,
  fanotify_init: 300,
  settimeofday: 164,
  clock_settime: 227,
  clock_adjtime: 305,
  adjtimex: 159,
  ptrace: 101,
  process_vm_readv: 310,
  process_vm_writev: 311,
  process_madvise: 440,
  pidfd_getfd: 438,
  kcmp: 312,
  move_pages: 279,
  mbind: 237,
  set_mempolicy: 238,
  get_mempolicy: 239,
  set_mempolicy_home_node: 450,
  iopl: 172,
  ioperm: 173,
  afs_syscall: 183,
  tuxcall: 184,
  security: 185,
  putpmsg: 182,
  getpmsg: 181,
  vserver: 236,
};

const ARM64: Partial<Record<CallName, number>> = {
  io_uring_setup: 425,
  io_uring_enter: 426,
  io_uring_register: 427,
  clone3: 435,
  clone: 220,
  personality: 92,
  perf_event_open: 241,
  bpf: 280,
  userfaultfd: 282,
  add_key: 217,
  request_key: 218,
  keyctl: 219,
  kexec_load: 104,
  kexec_file_load: 294,
  init_module: 105,
  finit_module: 273,
  delete_module: 106,
  reboot: 142,
  swapon: 224,
  swapoff: 225,
  acct: 89,
  syslog: 116,
  vhangup: 58,
  nfsservctl: 42,
  lookup_dcookie: 18,
  mount: 40,
  umount2: 39,
  pivot_root: 41,
  fsopen: 430,
  fsconfig: 431,
  fsmount: 432,
  fspick: 433,
  move_mount: 429,
  open_tree: 428,
  mount_setattr: 442,
  setns: 268,
  unshare: 97,
  quotactl: 60,
  quotactl_fd: 443,
  open_by_handle_at: 265,
  name_to_handle_at: 264,
  fanotify_init: 262,
  settimeofday: 170,
  clock_settime: 112,
  clock_adjtime: 266,
  adjtimex: 171,
  ptrace: 117,
  process_vm_readv: 270,
  process_vm_writev: 271,
  process_madvise: 440,
  pidfd_getfd: 438,
  kcmp: 272,
  move_pages: 239,
  mbind: 235,
  set_mempolicy: 237,
  get_mempolicy: 236,
  set_mempolicy_home_node: 450,
};

/** The audit arch and the call numbers, per Node architecture. */
const ARCHES: Record<string, { audit: number; numbers: Partial<Record<CallName, number>>; x32?: boolean }> = {
  x64: { audit: 0xc000003e, numbers: X64, x32: true },
  arm64: { audit: 0xc00000b7, numbers: ARM64 },
};

/**
 * A BPF program under construction: instructions whose jumps name labels, resolved to the
 * relative offsets (at most 255 forward) classic BPF encodes.
 */
class Program {
  private readonly code: { op: number; k: number; jt?: string; jf?: string }[] = [];
  private readonly labels = new Map<string, number>();

  load(offset: number): void {
    this.code.push({ op: BPF_LD_W_ABS, k: offset });
  }
  /** Jump to `jt` when the test holds, else to `jf` (undefined: the next instruction). */
  jump(op: number, k: number, jt?: string, jf?: string): void {
    this.code.push({ op, k, jt, jf });
  }
  ret(k: number): void {
    this.code.push({ op: BPF_RET_K, k });
  }
  label(name: string): void {
    this.labels.set(name, this.code.length);
  }

  assemble(): Buffer {
    const buf = Buffer.alloc(this.code.length * 8);
    this.code.forEach((ins, i) => {
      const offset = (label: string | undefined) => {
        if (label === undefined) return 0;
        const at = this.labels.get(label);
        if (at === undefined) throw new Error(`seccomp: no label ${label}`);
        const d = at - i - 1;
        if (d < 0 || d > 255) throw new Error(`seccomp: jump to ${label} out of range`);
        return d;
      };
      buf.writeUInt16LE(ins.op, i * 8);
      buf.writeUInt8(offset(ins.jt), i * 8 + 2);
      buf.writeUInt8(offset(ins.jf), i * 8 + 3);
      buf.writeUInt32LE(ins.k >>> 0, i * 8 + 4);
    });
    return buf;
  }
}

/** The filter for `arch` (default: this process's), or undefined where it is not known. */
export function seccompFilter(arch: string = process.arch): Buffer | undefined {
  const a = ARCHES[arch];
  if (!a) return undefined;
  const nr = (name: CallName) => a.numbers[name];
  const p = new Program();
  p.load(OFFSET_ARCH);
  p.jump(BPF_JEQ_K, a.audit, undefined, 'enosys');
  p.load(OFFSET_NR);
  if (a.x32) p.jump(BPF_JGE_K, X32_SYSCALL_BIT, 'enosys');
  p.jump(BPF_JEQ_K, nr('clone')!, 'clone');
  p.jump(BPF_JEQ_K, nr('personality')!, 'personality');
  for (const name of ABSENT_CALLS) {
    const n = nr(name);
    if (n !== undefined) p.jump(BPF_JEQ_K, n, 'enosys');
  }
  for (const name of REFUSED_CALLS) {
    const n = nr(name);
    if (n !== undefined) p.jump(BPF_JEQ_K, n, 'eperm');
  }
  p.ret(RET_ALLOW);
  // clone(flags, …): flags are the first argument on both architectures; the kernel reads their low 32 bits.
  p.label('clone');
  p.load(OFFSET_ARG0_LOW);
  p.jump(BPF_JSET_K, CLONE_NAMESPACE_FLAGS, 'eperm');
  p.ret(RET_ALLOW);
  p.label('personality');
  p.load(OFFSET_ARG0_LOW);
  for (const persona of SAFE_PERSONAS) p.jump(BPF_JEQ_K, persona, 'allow');
  p.ret(RET_ERRNO | EPERM);
  p.label('allow');
  p.ret(RET_ALLOW);
  // Classic BPF jumps only forward: the shared returns come last.
  p.label('eperm');
  p.ret(RET_ERRNO | EPERM);
  p.label('enosys');
  p.ret(RET_ERRNO | ENOSYS);
  return p.assemble();
}
