import type { OpenAPIHono } from '@hono/zod-openapi';
import { CONTROL_ID_MAX_LENGTH } from '../replay/replay-socket.js';
import { IdParams, ReplayCommandDoc, ReplayEventDoc } from './schemas.js';

/** The WebSocket routes are plain hono routes (an upgrade has no OpenAPI shape); this puts them in the document. */
export function documentWebSockets(app: OpenAPIHono): void {
  app.openAPIRegistry.register('ReplayCommand', ReplayCommandDoc);
  app.openAPIRegistry.register('ReplayEvent', ReplayEventDoc);
  documentSocket(app, {
    path: '/v1/bags/{id}/replay',
    summary: 'WebSocket replay with VLink controls',
    description:
      'Send JSON commands (ReplayCommand): play {rate, begin, end, urls, times, paused, timeBase}, pause, resume, step, seek {time}, rate {rate}, stop.\n' +
      'Receive each frame as one binary message in the binary layout of GET …/messages?format=binary, and JSON events (ReplayEvent): ' +
      'status {status, time, rate, dropped}, finished {interrupted, dropped}, error {code, message}.\n' +
      `Any command may carry an id (string ≤ ${CONTROL_ID_MAX_LENGTH} characters, or number): the one status event that shows ` +
      'the command in effect echoes it as id (play: the new pass has started; pause: paused; resume: playing; step: paused ' +
      'after its frame; seek, rate: at the new position; stop: stopped, before finished), or the error event does if the ' +
      'command fails. Answers come in the order of the commands.\n' +
      'rate 0 = as fast as the client reads (the server waits for the socket to drain, nothing is lost); paced replay drops frames ' +
      'while more than 8 MiB are queued for the client and counts them in `dropped`. Auth: bearer header or ?token=.',
    failures: { 404: 'No such bag', 426: 'Not a WebSocket request' },
  });
  documentSocket(app, {
    path: '/v1/bags/{id}/foxglove',
    summary: 'Foxglove WebSocket protocol (foxglove.websocket.v1)',
    description:
      'serverInfo (capability time), advertise (one channel per url; protobuf with the embedded FileDescriptorSet, raw as schemaless json), ' +
      'subscribe/unsubscribe, then messageData (opcode 1) and time (opcode 2) at replay pace. The replay starts with the first subscription. ' +
      'Query: rate (default 1, 0 = as fast as possible), begin/end (ms), loop (true/false), token.',
    failures: { 400: 'Missing subprotocol', 404: 'No such bag' },
  });
}

/** A `GET /v1/bags/{id}/…` WebSocket route in the document: 101 when it upgrades, else one of its `failures`. */
function documentSocket(
  app: OpenAPIHono,
  route: { path: string; summary: string; description: string; failures: Record<number, string> },
): void {
  const responses: Record<number, { description: string }> = { 101: { description: 'Switching protocols' } };
  for (const [status, description] of Object.entries(route.failures)) responses[Number(status)] = { description };
  app.openAPIRegistry.registerPath({
    method: 'get',
    path: route.path,
    summary: route.summary,
    description: route.description,
    request: { params: IdParams },
    responses,
    'x-websocket': true,
  } as never);
}
