import type { Backend } from '@vlink/bag-core';
import { SourceReadable } from '@vlink/bag-mcap';
import { readOnly } from './common/errors.js';
import { loadMcapCodecs } from './common/lz4.js';
import { createPlainMcapWriter } from './mcap/mcap-writer-backend.js';
import { ROS2_STORAGE_FILE } from './ros2/storage-file.js';

// Each reader is imported when a file of its format is opened, not with this module: `@vlink/bag` registers every
// backend, and the readers' libraries (protobuf, YAML, ROS message definitions, ULog) took 190 ms of every start of
// the CLI on Node, most of which never opens a foreign file.

/** MCAP's magic, the first 8 bytes of every MCAP file (any profile). */
export const MCAP_MAGIC = new Uint8Array([0x89, 0x4d, 0x43, 0x41, 0x50, 0x30, 0x0d, 0x0a]);

/**
 * `.mcap`: read in any profile (also found by its magic, a file without the extension) by `McapForeignReader`;
 * written profile-neutral with the well-known encodings by `@vlink/bag-mcap`'s `PlainMcapWriter`. The one backend
 * that owns the extension for both (ARCHITECTURE.md); `.vcap` (VLink's profile) stays with `@vlink/bag-mcap`.
 */
export const mcapInteropBackend: Backend = {
  name: 'mcap-foreign',
  extensions: ['.mcap'],
  magic: [MCAP_MAGIC],
  // Async BagWriters import this module in a worker and pick the backend by name.
  workerModule: import.meta.url,
  createWriter: (path, config, context) => createPlainMcapWriter(path, config, context),
  openReader: async (path, options) =>
    (await import('./mcap/mcap-reader.js')).McapForeignReader.open(path, options, await loadMcapCodecs()),
  /** An `.mcap` behind a url (e.g. `s3://`): through its summary and indexes, a range at a time. */
  openSource: async (source, options) =>
    (await import('./mcap/mcap-reader.js')).McapForeignReader.open(
      source.name,
      options,
      await loadMcapCodecs(),
      new SourceReadable(source),
    ),
};

/**
 * A backend that reads a foreign format and refuses to write it (`format` names it in that error). `workerModule`:
 * the HTTP server reads bags in worker threads only where their backend can be loaded there (see
 * `Backend.workerModule`); without it these formats were read on the server's own thread, where one slow or hostile
 * bag held every request, and no deadline could stop it.
 */
function readOnlyBackend(
  format: string,
  backend: Omit<Backend, 'readOnly' | 'createWriter' | 'workerModule'>,
): Backend {
  return { ...backend, readOnly: true, workerModule: import.meta.url, createWriter: (path) => readOnly(format, path) };
}

/** ROS 1 bags, format 2.0 (`#ROSBAG V2.0`). */
export const rosbagBackend = readOnlyBackend('ROS 1 .bag', {
  name: 'rosbag',
  extensions: ['.bag'],
  magic: [new TextEncoder().encode('#ROSBAG V2.0\n')],
  openReader: async (path, options) => (await import('./ros1/ros1-reader.js')).Ros1Reader.open(path, options),
});

/** ROS 2 bags: a bag folder (`metadata.yaml`; sqlite3 or mcap storage) or a single `.db3`. */
export const rosbag2Backend = readOnlyBackend('ROS 2 bag', {
  name: 'rosbag2',
  extensions: ['.db3'],
  directoryMarker: 'metadata.yaml',
  directoryFiles: ROS2_STORAGE_FILE,
  openReader: async (path, options) => (await import('./ros2/ros2-reader.js')).Ros2Reader.open(path, options),
});

/** Apollo Cyber RT records: `x.record`, and the numbered files `cyber_recorder` splits a recording into. */
export const cyberRecordBackend = readOnlyBackend('Apollo .record', {
  name: 'cyber-record',
  extensions: ['.record'],
  numberedSegments: true,
  openReader: async (path, options) => (await import('./apollo/apollo-reader.js')).ApolloReader.open(path, options),
});

/** PX4 ULog (`ULog\x01\x12\x35`). */
export const ulogBackend = readOnlyBackend('PX4 .ulg', {
  name: 'ulog',
  extensions: ['.ulg'],
  magic: [new Uint8Array([0x55, 0x4c, 0x6f, 0x67, 0x01, 0x12, 0x35])],
  openReader: async (path, options) => (await import('./ulog/ulog-reader.js')).UlogReader.open(path, options),
});

/** Every backend of this package (all read-only but `.mcap`), in the order `@vlink/bag` registers them. */
export const interopBackends: readonly Backend[] = [
  mcapInteropBackend,
  rosbagBackend,
  rosbag2Backend,
  cyberRecordBackend,
  ulogBackend,
];
