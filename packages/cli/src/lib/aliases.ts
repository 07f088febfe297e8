/** VLink's flag spellings that differ from ours by more than `_` → `-`. */
const RENAMED: Record<string, string> = {
  '--begin-time': '--begin',
  '--end-time': '--end',
  '--wal-mode': '--wal',
  '--sync-mode': '--sync',
};

/**
 * Accepts VLink's own long flags (`--begin_time 10`, `--split_by_size=2`, `--max_split_count`, …) by rewriting them
 * to ours before parsing, so commands copied from VLink's documentation work. Only `--long` flags before a bare `--`
 * are touched; values and positional arguments are left alone.
 */
export function vlinkFlagAliases(argv: readonly string[]): string[] {
  const out: string[] = [];
  let passthrough = false;
  for (const arg of argv) {
    if (passthrough || !arg.startsWith('--') || arg === '--') {
      if (arg === '--') passthrough = true;
      out.push(arg);
      continue;
    }
    const eq = arg.indexOf('=');
    const name = (eq < 0 ? arg : arg.slice(0, eq)).replace(/_/g, '-');
    const renamed = RENAMED[name] ?? name;
    out.push(eq < 0 ? renamed : renamed + arg.slice(eq));
  }
  return out;
}
