import { usageError } from './errors.js';
import { COMPRESS_CHOICES } from './parse.js';

/** VLink's and Apollo's flag spellings that differ from ours by more than `_` → `-`. */
const RENAMED: Record<string, string> = {
  '--begin-time': '--begin',
  '--end-time': '--end',
  '--wal-mode': '--wal',
  '--sync-mode': '--sync',
  // Apollo cyber_recorder
  '--white-channel': '--urls',
  '--black-channel': '--skip-urls',
};

/**
 * Flags with an optional value. Commander would take the next word as the value (`info --gaps drive.vdb` read the
 * path as the factor), so the value is only taken in `--flag=value` form; a bare flag becomes `--flag=` (its parser
 * maps the empty value to the default). `keywords`: a following word from this closed set is still taken as the
 * value (`-p zstd`, VLink's and our documented spelling) — such a word can never be a bag path, which has an extension.
 * `looksLikeValue`: a following word of this shape is refused with the `=` spelling, instead of being silently read
 * as a positional argument.
 */
interface OptionalValueFlag {
  verbs: readonly string[];
  names: readonly string[];
  canonical: string;
  keywords?: readonly string[];
  looksLikeValue?: RegExp;
}

const OPTIONAL_VALUE_FLAGS: readonly OptionalValueFlag[] = [
  { verbs: ['info'], names: ['--gaps'], canonical: '--gaps', looksLikeValue: /^\d+(\.\d*)?$/ },
  {
    verbs: ['play'],
    names: ['--serve'],
    canonical: '--serve',
    looksLikeValue: /^(\[[0-9a-f:.]+\]:|[\w.-]*:)?\d{1,5}$/i,
  },
  {
    verbs: ['trigger'],
    names: ['--http'],
    canonical: '--http',
    looksLikeValue: /^(\[[0-9a-f:.]+\]:|[\w.-]*:)?\d{1,5}$/i,
  },
  {
    verbs: ['record', 'clone', 'merge', 'split'],
    names: ['-p', '--compress'],
    canonical: '--compress',
    keywords: COMPRESS_CHOICES,
  },
];

/** The verb of an argument list: the first word that is not a (global, value-less) option. */
export function verbOf(argv: readonly string[]): string | undefined {
  return argv.find((arg) => !arg.startsWith('-'));
}

/** The verb, or `trigger dump` for the trigger daemon's client (whose `--http` takes a required value). */
function commandPath(argv: readonly string[]): string | undefined {
  const words = argv.filter((arg) => !arg.startsWith('-'));
  return words[0] === 'trigger' && words[1] === 'dump' ? 'trigger dump' : words[0];
}

/**
 * Rewrites an argument list before commander parses it: VLink's long flags (`--begin_time 10`, `--split_by_size=2`,
 * `--local_time`) and Apollo's (`--white-channel`) become ours, and bare optional-value flags become `--flag=` so they
 * never swallow the next word. Only flags before a bare `--` are touched; values and positionals are left alone.
 */
export function vlinkFlagAliases(argv: readonly string[]): string[] {
  const verb = commandPath(argv);
  const out: string[] = [];
  let passthrough = false;
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i]!;
    if (passthrough || !arg.startsWith('-') || arg === '--' || arg === '-') {
      if (arg === '--') passthrough = true;
      out.push(arg);
      continue;
    }
    const eq = arg.indexOf('=');
    const long = arg.startsWith('--');
    const rawName = eq < 0 ? arg : arg.slice(0, eq);
    const name = long ? (RENAMED[rawName.replace(/_/g, '-')] ?? rawName.replace(/_/g, '-')) : rawName;
    const optional = OPTIONAL_VALUE_FLAGS.find(
      (flag) => verb && flag.verbs.includes(verb) && flag.names.includes(name),
    );
    if (optional && eq < 0) {
      const next = argv[i + 1];
      if (next !== undefined && optional.keywords?.includes(next.toLowerCase())) {
        out.push(`${optional.canonical}=${next}`);
        i++;
        continue;
      }
      if (next !== undefined && optional.looksLikeValue?.test(next))
        throw usageError(
          `${name} takes its value as ${optional.canonical}=${next} (a separate word is read as a file, not as the value)`,
        );
      out.push(`${optional.canonical}=`);
      continue;
    }
    if (optional) {
      out.push(`${optional.canonical}${arg.slice(eq)}`);
      continue;
    }
    out.push(eq < 0 ? name : name + arg.slice(eq));
  }
  return out;
}
