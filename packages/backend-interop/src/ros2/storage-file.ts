/**
 * The names rosbag2 gives storage files, `<bag>_<n>.db3` / `.mcap` (`.zstd` after them where compressed as files):
 * what a folder without metadata.yaml is read from, as `ros2 bag reindex` finds them. In a file of its own so the
 * backend list can name it without loading the reader (backends.ts).
 */
export const ROS2_STORAGE_FILE = /^.+_(\d+)\.(db3|mcap)(\.zstd)?$/i;
