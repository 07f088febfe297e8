import { existsSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';

/** The package whose definitions are used, as Foxglove's own rosbag2 readers use it. */
export const STANDARD_DEFINITIONS_PACKAGE = '@foxglove/rosmsg-msgs-common';

/** The ROS 2 distros that package has definitions of (`msgdefs/ros2<distro>/`), oldest first. */
const DISTROS = ['galactic', 'humble', 'iron', 'jazzy'] as const;
type Distro = (typeof DISTROS)[number];

/** `pkg/msg/Type` or, as the first rosbag2 releases named types, `pkg/Type`; nothing else names a file there. */
const TYPE_NAME = /^([A-Za-z][A-Za-z0-9_]*)\/(?:msg\/)?([A-Za-z][A-Za-z0-9_]*)$/;

/**
 * Which distro's definitions fit a bag that names none of its types' layouts. rosbag2 stores definitions only from
 * Iron on (and there too a type it could not find, as encoding `unknown`); before, a bag holds type names only, and
 * `ros2 bag play` decodes with the packages of the distro it runs on. The distro is what the bag says (metadata.yaml
 * `ros_distro`, Iron on; the sqlite3 `schema` table, Humble since rosbag2 0.15.4), else guessed from the metadata
 * version: 4 and before are Foxy or older, closest to Galactic's (Humble's `visualization_msgs/Marker` has fields
 * they lack); later ones Humble's. A newer distro than the package knows (rolling, kilted) takes its newest.
 */
export function distroOf(stated: readonly (string | undefined)[], metadataVersion: number | undefined): Distro {
  for (const name of stated) {
    const distro = name?.trim().toLowerCase();
    if (!distro) continue;
    if ((DISTROS as readonly string[]).includes(distro)) return distro as Distro;
    // Distro names go in alphabetical order: one after the last known is newer, one before it older than Galactic.
    return distro > DISTROS[DISTROS.length - 1]! ? DISTROS[DISTROS.length - 1]! : DISTROS[0];
  }
  return metadataVersion !== undefined && metadataVersion <= 4 ? 'galactic' : 'humble';
}

/**
 * The definition text (`ros2msg`: the type's .msg with the types it uses after `MSG:` lines, as rosbag2 stores it) of
 * a standard ROS 2 message type (common_interfaces, rcl_interfaces, unique_identifier_msgs, …) in a distro, or
 * undefined where the package has none. Read from the package's files: they are the texts it was generated from.
 */
export class StandardDefinitions {
  private readonly cache = new Map<string, string | undefined>();

  constructor(readonly distro: Distro) {}

  textOf(type: string): string | undefined {
    if (this.cache.has(type)) return this.cache.get(type);
    const match = TYPE_NAME.exec(type);
    const root = match ? packageRoot() : undefined;
    const file = root && join(root, 'msgdefs', `ros2${this.distro}`, match![1]!, 'msg', `${match![2]}.msg`);
    const text = file && existsSync(file) ? readFileSync(file, 'utf8') : undefined;
    this.cache.set(type, text);
    return text;
  }
}

let root: string | null | undefined;

/** Where the package is installed (null when it is not: then no standard definition is known). */
function packageRoot(): string | undefined {
  if (root === undefined) {
    try {
      root = dirname(createRequire(import.meta.url).resolve(`${STANDARD_DEFINITIONS_PACKAGE}/package.json`));
    } catch {
      root = null;
    }
  }
  return root ?? undefined;
}
