import { WebSocket } from 'ws';
import { ActionType, SchemaType } from '@vlink/bag';
import { CliError } from './errors.js';
import type { LiveSource } from './live-source.js';

/** How often the topic list is asked for again, so topics advertised later are recorded too. */
const TOPIC_POLL_MS = 2000;
const ROSAPI_TIMEOUT_MS = 5000;

interface RosbridgeMessage {
  op?: string;
  id?: string;
  topic?: string;
  msg?: unknown;
  values?: { topics?: unknown; types?: unknown };
  result?: boolean;
  level?: string;
  msg_text?: string;
}

/**
 * `--from rosbridge://host:port`: a rosbridge v2 client (the JSON protocol of rosbridge_suite, as ROS 1 and ROS 2
 * users run it: `ws://host:9090`). Topics come from the `/rosapi/topics` service (asked again every 2 s, so later
 * topics are picked up) or, with `-u`, are subscribed by name without rosapi. Each `publish` is recorded as a `Sub`
 * frame: url = topic, ser = the ROS type (`sensor_msgs/msg/Imu`; `json` when unknown), schema family Raw, payload
 * = the message as UTF-8 JSON — what rosbridge sends; nothing is re-encoded. Timestamps: `receive` stamps frames on
 * arrival; `log` uses the message's `header.stamp` (ROS 1 `secs/nsecs` or ROS 2 `sec/nanosec`) relative to the
 * first one seen, and arrival time for messages without a header. `rosbridge+wss://` connects over TLS.
 */
export const recordFromRosbridge: LiveSource = async (sink, url, accept, time, explicitTopics) => {
  const parsed = new URL(url);
  const wsUrl = `${parsed.protocol === 'rosbridge+wss:' ? 'wss' : 'ws'}://${parsed.host}${parsed.pathname === '/' ? '' : parsed.pathname}`;
  const ws = new WebSocket(wsUrl);
  const connected = new Promise<void>((resolve, reject) => {
    ws.once('open', () => resolve());
    ws.once('error', (error) => reject(new CliError(`cannot connect: ${(error as Error).message || 'failed'}`, url)));
  });
  const closed = new Promise<void>((resolve) => ws.once('close', () => resolve()));
  const send = (value: Record<string, unknown>) => ws.send(JSON.stringify(value));
  const types = new Map<string, string>();
  const subscribed = new Set<string>();
  const encoder = new TextEncoder();
  let firstStampNs: bigint | undefined;
  let ids = 0;
  let answeredTopics = false;
  let failure: CliError | undefined;

  const subscribe = (topic: string, type?: string) => {
    if (subscribed.has(topic) || !accept(topic)) return;
    subscribed.add(topic);
    if (type) types.set(topic, type);
    send({ op: 'subscribe', id: `vlink-sub-${++ids}`, topic, ...(type ? { type } : {}) });
  };
  const askTopics = () =>
    send({ op: 'call_service', id: `vlink-topics-${++ids}`, service: '/rosapi/topics', args: {} });

  ws.on('message', (raw) => {
    let message: RosbridgeMessage;
    try {
      message = JSON.parse(raw.toString()) as RosbridgeMessage;
    } catch {
      sink.log('warning: a message that is not JSON was skipped (only the JSON protocol is supported)');
      return;
    }
    if (message.op === 'publish' && typeof message.topic === 'string') {
      if (!subscribed.has(message.topic) || sink.isStopping) return;
      const text = JSON.stringify(message.msg ?? null);
      void sink.write({
        url: message.topic,
        serType: types.get(message.topic) ?? 'json',
        schemaType: SchemaType.Raw,
        actionType: ActionType.Subscribe,
        timestamp: time === 'log' ? stampUs(message.msg) : -1,
        data: encoder.encode(text),
      });
      return;
    }
    if (message.op === 'service_response' && message.id?.startsWith('vlink-topics-')) {
      answeredTopics = true;
      if (message.result === false) {
        failure ??= new CliError('/rosapi/topics failed: name the topics with -u', url);
        sink.stop('error');
        return;
      }
      const topics = Array.isArray(message.values?.topics) ? (message.values.topics as unknown[]) : [];
      const topicTypes = Array.isArray(message.values?.types) ? (message.values.types as unknown[]) : [];
      topics.forEach((topic, i) => {
        if (typeof topic === 'string')
          subscribe(topic, typeof topicTypes[i] === 'string' ? (topicTypes[i] as string) : undefined);
      });
      return;
    }
    if (message.op === 'status' && message.level === 'error')
      sink.log(`server: ${message.msg_text ?? JSON.stringify(message)}`);
  });

  /** `header.stamp` in µs relative to the first stamp seen; -1 (arrival) without one. */
  function stampUs(msg: unknown): number {
    const stamp = (msg as { header?: { stamp?: Record<string, number> } } | null)?.header?.stamp;
    if (!stamp) return -1;
    const secs = stamp['sec'] ?? stamp['secs'];
    const nanos = stamp['nanosec'] ?? stamp['nsecs'] ?? 0;
    if (typeof secs !== 'number') return -1;
    const ns = BigInt(Math.trunc(secs)) * 1_000_000_000n + BigInt(Math.trunc(nanos));
    firstStampNs ??= ns;
    const us = (ns - firstStampNs) / 1000n;
    return us < 0n ? 0 : Number(us);
  }

  await connected;
  await sink.open();
  let poll: ReturnType<typeof setInterval> | undefined;
  let rosapiTimer: ReturnType<typeof setTimeout> | undefined;
  if (explicitTopics && explicitTopics.length > 0) {
    for (const topic of explicitTopics) subscribe(topic);
  } else {
    askTopics();
    poll = setInterval(askTopics, TOPIC_POLL_MS);
    rosapiTimer = setTimeout(() => {
      if (answeredTopics) return;
      failure ??= new CliError('no answer from /rosapi/topics (is rosapi running?): name the topics with -u', url);
      sink.stop('error');
    }, ROSAPI_TIMEOUT_MS);
  }
  const reason = await Promise.race([sink.stopped, closed.then(() => 'connection closed by the server')]);
  if (poll) clearInterval(poll);
  if (rosapiTimer) clearTimeout(rosapiTimer);
  if (reason === 'connection closed by the server') sink.stop(reason);
  ws.close();
  if (failure) throw failure;
};
