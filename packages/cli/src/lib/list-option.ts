import { Option } from 'commander';

/**
 * A list flag that never swallows the next flag or a positional argument: one value per occurrence, commas inside a
 * value split it (`-u /imu,/camera` or `-u /imu -u /camera`). Commander's variadic `<urls...>` took every following
 * word, so `cat -k /x --format text` read `--format` and `text` as urls.
 */
export function listOption(flags: string, description: string): Option {
  return new Option(flags, `${description} (comma-separated or repeated)`).argParser(splitList);
}

/** Adds the comma-separated items of `value` to the list collected so far. */
export function splitList(value: string, previous: string[] | undefined): string[] {
  const items = value
    .split(',')
    .map((item) => item.trim())
    .filter((item) => item !== '');
  return [...(previous ?? []), ...items];
}
