/**
 * The seccomp filter bubblewrap installs in every sandbox (`--seccomp FD`): a classic BPF
 * program, as `seccomp_export_bpf` would write it, refusing the kernel keyring calls
 * (`add_key`, `request_key`, `keyctl`) with EPERM, as Docker's default profile does. Keys
 * belong to the host uid every sandbox shares (65534), so its key quota would be one all
 * tenants share; nothing an algorithm or a build needs uses them, and they are kernel surface.
 * System calls of another ABI (x86's 32-bit and x32 calls on x86_64) are refused with ENOSYS
 * too: they would reach the same calls under other numbers.
 */

/** struct seccomp_data: nr at offset 0, arch at offset 4. */
const OFFSET_NR = 0;
const OFFSET_ARCH = 4;
const BPF_LD_W_ABS = 0x20;
const BPF_JEQ_K = 0x15;
const BPF_JGE_K = 0x35;
const BPF_RET_K = 0x06;
const RET_ALLOW = 0x7fff0000;
const RET_ERRNO = 0x00050000;
const EPERM = 1;
const ENOSYS = 38;
const X32_SYSCALL_BIT = 0x40000000;

/** The audit arch and the keyring calls' numbers, per Node architecture. */
const ARCHES: Record<string, { audit: number; keyring: number[]; x32?: boolean }> = {
  x64: { audit: 0xc000003e, keyring: [248, 249, 250], x32: true },
  arm64: { audit: 0xc00000b7, keyring: [217, 218, 219] },
};

/** The filter for `arch` (default: this process's), or undefined where it is not known. */
export function seccompFilter(arch: string = process.arch): Buffer | undefined {
  const a = ARCHES[arch];
  if (!a) return undefined;
  const prog: [number, number, number, number][] = [];
  const ins = (code: number, jt: number, jf: number, k: number) => prog.push([code, jt, jf, k]);
  ins(BPF_LD_W_ABS, 0, 0, OFFSET_ARCH);
  ins(BPF_JEQ_K, 1, 0, a.audit);
  ins(BPF_RET_K, 0, 0, RET_ERRNO | ENOSYS);
  ins(BPF_LD_W_ABS, 0, 0, OFFSET_NR);
  if (a.x32) {
    ins(BPF_JGE_K, 0, 1, X32_SYSCALL_BIT);
    ins(BPF_RET_K, 0, 0, RET_ERRNO | ENOSYS);
  }
  // Each refused number jumps to the EPERM return after the last test and the ALLOW.
  a.keyring.forEach((nr, i) => ins(BPF_JEQ_K, a.keyring.length - i, 0, nr));
  ins(BPF_RET_K, 0, 0, RET_ALLOW);
  ins(BPF_RET_K, 0, 0, RET_ERRNO | EPERM);
  const buf = Buffer.alloc(prog.length * 8);
  prog.forEach(([code, jt, jf, k], i) => {
    buf.writeUInt16LE(code, i * 8);
    buf.writeUInt8(jt, i * 8 + 2);
    buf.writeUInt8(jf, i * 8 + 3);
    buf.writeUInt32LE(k >>> 0, i * 8 + 4);
  });
  return buf;
}
