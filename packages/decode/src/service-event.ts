/**
 * rosbag2 records a service's events (`ros2 bag record --all-services`, topics `…/_service_event`) with the type
 * `pkg/srv/Name_Event` but stores the service's own text as its `ros2msg` schema (request fields, `---`, response
 * fields; ros2/rosbag2#2365), which describes neither the payload nor any message. The payload is the event message
 * that rosidl generates for every service, rebuilt here from that text:
 *
 *   service_msgs/msg/ServiceEventInfo info
 *   pkg/srv/Name_Request[<=1] request
 *   pkg/srv/Name_Response[<=1] response
 */
const SEPARATOR = '='.repeat(80);

const SERVICE_EVENT_INFO = `uint8 REQUEST_SENT=0
uint8 REQUEST_RECEIVED=1
uint8 RESPONSE_SENT=2
uint8 RESPONSE_RECEIVED=3
uint8 event_type
builtin_interfaces/Time stamp
char[16] client_gid
int64 sequence_number`;

const TIME = `int32 sec
uint32 nanosec`;

/**
 * The event message's definition when `type` is a service event and `definition` the service's text (a `---` line
 * splits its first section), else undefined (the schema is taken as it is: a writer that stores the event message
 * itself needs nothing rebuilt).
 */
export function serviceEventDefinition(type: string, definition: string): string | undefined {
  const name = /^(.+\/srv\/.+)_Event$/.exec(type)?.[1];
  if (name === undefined) return undefined;
  const sections = definition.split(/^=+[ \t]*$/m);
  // Newer rosbag2 writes the service under a header (`SRV: pkg/srv/Name`); older ones its text alone.
  const at = sections.findIndex((s) => /^---[ \t]*$/m.test(s));
  if (at < 0) return undefined;
  const service = sections[at]!.replace(/^\s*SRV:[^\n]*\n/, '');
  // Found by this very line, so there are two parts at least.
  const [request, response] = service.split(/^---[ \t]*$/m) as [string, string];
  const dependencies = sections
    .filter((_, i) => i !== at)
    .map((s) => s.trim())
    .filter((s) => s !== '');
  const has = (dependency: string) =>
    dependencies.some((s) => new RegExp(`^MSG: ${dependency.replace('/msg/', '/(msg/)?')}\\s*$`, 'm').test(s));
  const msg = (dependency: string, text: string) => `MSG: ${dependency}\n${text.trim()}`;
  return [
    `service_msgs/msg/ServiceEventInfo info\n${name}_Request[<=1] request\n${name}_Response[<=1] response`,
    msg(`${name}_Request`, request),
    msg(`${name}_Response`, response),
    ...(has('service_msgs/msg/ServiceEventInfo') ? [] : [msg('service_msgs/msg/ServiceEventInfo', SERVICE_EVENT_INFO)]),
    ...(has('builtin_interfaces/msg/Time') ? [] : [msg('builtin_interfaces/msg/Time', TIME)]),
    ...dependencies,
  ].join(`\n${SEPARATOR}\n`);
}
