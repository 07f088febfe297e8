import assert from 'node:assert/strict';
import { describe, test } from '@vlink/fixtures/test';
import { parse } from '@foxglove/rosmsg';
import { MessageWriter as CdrWriter } from '@foxglove/rosmsg2-serialization';
import { SchemaType } from '@vlink/bag-core';
import { PayloadDecoder } from './index.js';
import { serviceEventDefinition } from './service-event.js';

const utf8 = (text: string) => new TextEncoder().encode(text);
const SEPARATOR = '='.repeat(80);
/** The one dependency of the service, as both the event message and the service text carry it. */
const POINT = `${SEPARATOR}
MSG: geometry_msgs/Point
float64 x
float64 y
float64 z
`;

/** What rosidl generates for `pkg/srv/Locate` (request: a name; response: a pose and a status), written out. */
const EVENT_DEFINITION = `service_msgs/msg/ServiceEventInfo info
pkg/srv/Locate_Request[<=1] request
pkg/srv/Locate_Response[<=1] response
${SEPARATOR}
MSG: service_msgs/msg/ServiceEventInfo
uint8 event_type
builtin_interfaces/Time stamp
char[16] client_gid
int64 sequence_number
${SEPARATOR}
MSG: pkg/srv/Locate_Request
string name
${SEPARATOR}
MSG: pkg/srv/Locate_Response
geometry_msgs/Point where
bool found
${POINT}`;

const info = (eventType: number, sequence: bigint) => ({
  event_type: eventType,
  stamp: { sec: 1_700_000_000, nanosec: 5 },
  client_gid: Array.from({ length: 16 }, (_, i) => i),
  sequence_number: sequence,
});
const events = [
  { info: info(0, 7n), request: [{ name: 'dock' }], response: [] },
  { info: info(3, 7n), request: [], response: [{ where: { x: 1, y: -2, z: 0.5 }, found: true }] },
];
const writer = new CdrWriter(parse(EVENT_DEFINITION, { ros2: true }));

/** The service's text as rosbag2 stores it for its event topic: alone (Jazzy), or under an `SRV:` header. */
const SERVICE = `string name
---
geometry_msgs/Point where
bool found
${POINT}`;
const WITH_HEADER = `${SEPARATOR}\nSRV: pkg/srv/Locate\n${SERVICE}`;

describe('service events recorded by rosbag2 (schema: the service text)', () => {
  for (const [name, text] of [
    ['the service text alone', SERVICE],
    ['under an SRV: header', WITH_HEADER],
  ] as const) {
    test(`decoded as the event message: ${name}`, () => {
      const decoder = new PayloadDecoder({
        schemas: [{ name: 'pkg/srv/Locate_Event', encoding: 'ros2msg', schemaType: SchemaType.Cdr, data: utf8(text) }],
        urls: [{ url: '/locate/_service_event', encoding: 'cdr' }],
      });
      for (const event of events) {
        const decoded = decoder.decode({
          url: '/locate/_service_event',
          serType: 'pkg/srv/Locate_Event',
          schemaType: SchemaType.Cdr,
          actionType: 0,
          data: writer.writeMessage(event),
        });
        assert.equal(decoded.kind, 'cdr', JSON.stringify(decoded));
        const value = JSON.parse(
          JSON.stringify(decoded.kind === 'cdr' ? decoded.value : null, (_, v) =>
            typeof v === 'bigint' ? Number(v) : v,
          ),
        );
        assert.deepEqual(value, JSON.parse(JSON.stringify(event, (_, v) => (typeof v === 'bigint' ? Number(v) : v))));
      }
    });
  }

  test('other types and schemas that describe the event itself are taken as they are', () => {
    assert.equal(serviceEventDefinition('pkg/msg/Locate_Event', SERVICE), undefined, 'a message, not a service');
    assert.equal(serviceEventDefinition('pkg/srv/Locate_Event', EVENT_DEFINITION), undefined, 'no --- line');
    const rebuilt = serviceEventDefinition('pkg/srv/Locate_Event', SERVICE) ?? '';
    // Each definition once: the service's own dependencies are kept, ServiceEventInfo and Time added.
    assert.deepEqual(
      rebuilt.split('\n').filter((line) => line.startsWith('MSG: ')),
      [
        'MSG: pkg/srv/Locate_Request',
        'MSG: pkg/srv/Locate_Response',
        'MSG: service_msgs/msg/ServiceEventInfo',
        'MSG: builtin_interfaces/msg/Time',
        'MSG: geometry_msgs/Point',
      ],
    );
    const withTime = `${SERVICE}${SEPARATOR}\nMSG: builtin_interfaces/Time\nint32 sec\nuint32 nanosec\n`;
    const times = (serviceEventDefinition('pkg/srv/Locate_Event', withTime) ?? '').match(/^MSG: builtin_interfaces/gm);
    assert.equal(times?.length, 1, 'a dependency the service brings is not added again');
  });
});
