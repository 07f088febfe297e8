/**
 * `@vlink/bag-interop`: read-only backends for the bags robotics users already have. `@vlink/bag` registers them, so
 * `BagReader.create(path)`, the CLI and the server open `.mcap` (any profile, also by magic), ROS 1 `.bag`, ROS 2 bag
 * folders and `.db3`, Apollo `.record` and PX4 `.ulg` like `.vdb`/`.vcap`.
 */
export {
  interopBackends,
  mcapInteropBackend,
  rosbagBackend,
  rosbag2Backend,
  cyberRecordBackend,
  ulogBackend,
  MCAP_MAGIC,
} from './backends.js';
export { McapForeignReader } from './mcap/mcap-reader.js';
export { Ros1Reader } from './ros1/ros1-reader.js';
export { Ros2Reader } from './ros2/ros2-reader.js';
export { ApolloReader } from './apollo/apollo-reader.js';
export { UlogReader } from './ulog/ulog-reader.js';
export { TimeBase } from './common/time-base.js';
