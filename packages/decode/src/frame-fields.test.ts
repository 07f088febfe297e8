import assert from 'node:assert/strict';
import { describe, test } from '@vlink/fixtures/test';
import { ActionType, SchemaType, serForAction as coreSerForAction } from '@vlink/bag-core';
import * as local from './frame-fields.js';

describe('frame-fields', () => {
  test("the local enum values and serForAction match core's", () => {
    assert.equal(local.SCHEMA_UNKNOWN, SchemaType.Unknown);
    assert.equal(local.SCHEMA_RAW, SchemaType.Raw);
    assert.equal(local.SCHEMA_ZEROCOPY, SchemaType.ZeroCopy);
    assert.equal(local.SCHEMA_PROTOBUF, SchemaType.Protobuf);
    assert.equal(local.SCHEMA_FLATBUFFERS, SchemaType.Flatbuffers);
    assert.equal(local.SCHEMA_CDR, SchemaType.Cdr);
    assert.equal(local.ACTION_CLIENT_REQUEST, ActionType.ClientRequest);
    for (let action = -1; action <= 9; action++) {
      for (const ser of ['', 'a', 'Req|Resp', '|Resp', 'Req|', 'a|b|c']) {
        assert.equal(
          local.serForAction(ser, action),
          coreSerForAction(ser, action as ActionType),
          `${ser} / ${action}`,
        );
      }
    }
  });
});
