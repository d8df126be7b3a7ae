/**
 * The artifact's size limit (ALGOHOST_MAX_ARTIFACT_BYTES): what a build's tree and layer
 * hold, measured between steps and while a step runs, and the failure that names the stage.
 */
import fs from 'node:fs';
import path from 'node:path';
import { BuildFailure } from '../../domain/builds/ports.js';

/** How often a running step's output is measured against the artifact limit. */
const SIZE_CHECK_MS = 5000;

/** A running measurement: `over()` is the size that passed the limit, if one did. */
export interface SizeWatch {
  stop(): void;
  over(): number | undefined;
}

/**
 * Measures the directories a running step writes every few seconds and calls `kill` once,
 * with `fixedBytes` added, they pass the artifact limit (0: none). `over()` is the size then.
 */
export function watchSize(dirs: string[], fixedBytes: number, limit: number, kill: () => void): SizeWatch {
  let stopped = !limit;
  let over: number | undefined;
  let timer: NodeJS.Timeout | undefined;
  const measure = async () => {
    const used = fixedBytes + (await sizeOf(dirs, limit - fixedBytes).catch(() => 0));
    if (stopped) return;
    if (used > limit) {
      over = used;
      kill();
    } else timer = setTimeout(() => void measure(), SIZE_CHECK_MS);
  };
  if (!stopped) timer = setTimeout(() => void measure(), SIZE_CHECK_MS);
  return {
    stop: () => {
      stopped = true;
      clearTimeout(timer);
    },
    over: () => over,
  };
}

/** Bytes the directories hold, plus `fixedBytes`; a build over `limit` (0: none) fails at `stage`. */
export async function checkSize(stage: string, dirs: string[], limit: number, fixedBytes = 0): Promise<number> {
  const used = fixedBytes + (await sizeOf(dirs, limit ? limit - fixedBytes : Infinity));
  if (limit && used > limit) throw new BuildFailure(tooLarge(stage, used, limit));
  return used;
}

export function tooLarge(stage: string, used: number, limit: number): string {
  return `the artifact (the built tree plus its dependency layer) grew to more than ${bytes(limit)} during ${stage}, the most this cluster keeps per build (${bytes(used)} counted so far; limit ${limit} bytes)`;
}

function bytes(n: number): string {
  const units = ['bytes', 'KiB', 'MiB', 'GiB', 'TiB'];
  let i = 0;
  while (n >= 1024 && i < units.length - 1) {
    n /= 1024;
    i++;
  }
  return `${i === 0 ? n : n.toFixed(n < 10 ? 1 : 0)} ${units[i]}`;
}

/**
 * Bytes used by the trees (each file counted by its size or the blocks it holds, whichever is
 * more; hard links once), without following links; stops counting once past `stopAbove`.
 */
async function sizeOf(dirs: string[], stopAbove: number): Promise<number> {
  let total = 0;
  const seen = new Set<string>();
  const stack = [...dirs];
  while (stack.length) {
    const dir = stack.pop()!;
    let entries: string[];
    try {
      entries = await fs.promises.readdir(dir);
    } catch {
      continue;
    }
    for (const e of entries) {
      const p = path.join(dir, e);
      let st: fs.Stats;
      try {
        st = await fs.promises.lstat(p);
      } catch {
        continue;
      }
      if (st.nlink > 1 && !st.isDirectory()) {
        const id = `${st.dev}:${st.ino}`;
        if (seen.has(id)) continue;
        seen.add(id);
      }
      total += Math.max(st.size, st.blocks * 512);
      if (total > stopAbove) return total;
      if (st.isDirectory()) stack.push(p);
    }
  }
  return total;
}
