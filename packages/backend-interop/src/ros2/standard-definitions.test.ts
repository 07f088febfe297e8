import assert from 'node:assert/strict';
import { cpSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, test } from '@vlink/fixtures/test';
import { BagError } from '@vlink/bag-core';
import { loadDriver } from '@vlink/bag-sqlite';
import { checkFixture } from '../testing/check-fixture.js';
import { decodeFrame } from '../testing/decode.js';
import { foreignPath } from '../testing/expected.js';
import { readAll } from '../testing/read-all.js';
import { registerAll } from '../testing/register.js';
import { distroOf, StandardDefinitions } from './standard-definitions.js';

registerAll();
const dir = mkdtempSync(join(tmpdir(), 'vlink-rosbag2-standard-'));
after(() => rmSync(dir, { recursive: true, force: true }));

const STANDARD = 'std_msgs/msg/String,sensor_msgs/msg/Imu,shape_msgs/msg/SolidPrimitive';

function standardEntry(info: { metadata?: Array<{ name: string; values: Record<string, string> }> }) {
  return info.metadata?.find((m) => m.name === 'rosbag2.standard_definitions')?.values;
}

describe('ROS 2 bags from before Iron (no message definitions) decode with their distro’s standard definitions', () => {
  for (const [bag, distro] of [
    ['sqlite3-humble', 'humble'],
    ['sqlite3-foxy', 'galactic'],
  ] as const) {
    test(`${bag}: decoded as rosbags decodes it with its distro's type store; the borrowed definitions are told`, async () => {
      const { reader, info, frames, schemas } = await checkFixture(`ros2/${bag}`);
      try {
        assert.deepEqual(standardEntry(info), {
          distro,
          source: '@foxglove/rosmsg-msgs-common',
          types: STANDARD,
        });
        // A type of the user's own has no definition anywhere: it stays undecodable, and says so.
        assert.equal(
          schemas.some((s) => s.name === 'vlink_test/msg/Reading'),
          false,
        );
        const custom = frames.find((f) => f.url === '/custom')!;
        assert.throws(
          () => decodeFrame(info, schemas, custom),
          (e: unknown) => BagError.isInstance(e) && /vlink_test\/msg\/Reading/.test(e.message),
        );
      } finally {
        reader.close();
      }
    });
  }

  test("the distro the storage names wins: a Foxy bag that claims Humble is decoded with Humble's layout, which refuses it", async () => {
    const copy = join(dir, 'claims-humble');
    cpSync(foreignPath('ros2', 'sqlite3-foxy'), copy, { recursive: true });
    const db = (await loadDriver()).open(join(copy, 'sqlite3-foxy.db3'));
    db.exec(
      "CREATE TABLE schema(schema_version INTEGER PRIMARY KEY, ros_distro TEXT NOT NULL); INSERT INTO schema VALUES (3, 'humble');",
    );
    db.close();
    const { reader, frames } = await readAll(copy);
    try {
      const info = reader.getInfo();
      assert.equal(standardEntry(info)?.['distro'], 'humble');
      // Humble's SolidPrimitive has a polygon after the dimensions, which Foxy's payloads lack: refused, not misread.
      const shape = frames.find((f) => f.url === '/shape')!;
      assert.throws(() => decodeFrame(info, reader.getSchemas(), shape), BagError.isInstance);
      // The types whose layout did not change decode all the same.
      const imu = decodeFrame(info, reader.getSchemas(), frames.find((f) => f.url === '/imu')!) as {
        linear_acceleration: { z: number };
      };
      assert.equal(imu.linear_acceleration.z, 9.81);
    } finally {
      reader.close();
    }
  });

  test('a definition the bag has is kept; a blank one (rosbag2 could not find the type) is replaced', async () => {
    const copy = join(dir, 'blank');
    cpSync(foreignPath('ros2', 'sqlite3'), copy, { recursive: true });
    const db = (await loadDriver()).open(join(copy, 'sqlite3.db3'));
    db.exec(
      "UPDATE message_definitions SET encoding = 'unknown', encoded_message_definition = '' WHERE topic_type = 'sensor_msgs/msg/Imu'",
    );
    db.close();
    const { reader, frames } = await readAll(copy);
    try {
      const info = reader.getInfo();
      // ros_distro of a bag rosbags wrote is "rosbags": after every distro name, so the newest set.
      assert.deepEqual(standardEntry(info), {
        distro: 'jazzy',
        source: '@foxglove/rosmsg-msgs-common',
        types: 'sensor_msgs/msg/Imu',
      });
      const schemas = reader.getSchemas();
      assert.equal(schemas.find((s) => s.name === 'sensor_msgs/msg/Imu')?.encoding, 'ros2msg');
      const imu = decodeFrame(info, schemas, frames.find((f) => f.url === '/imu')!) as { header: { frame_id: string } };
      assert.equal(typeof imu.header.frame_id, 'string');
    } finally {
      reader.close();
    }
  });

  test('which distro: stated first, newer names take the newest set, older the oldest; else by metadata version', () => {
    assert.equal(distroOf(['iron'], 8), 'iron');
    assert.equal(distroOf([undefined, 'Humble'], 5), 'humble');
    assert.equal(distroOf(['', 'jazzy'], undefined), 'jazzy');
    assert.equal(distroOf(['rolling'], 9), 'jazzy');
    assert.equal(distroOf(['kilted'], 9), 'jazzy');
    assert.equal(distroOf(['foxy'], 4), 'galactic');
    assert.equal(distroOf(['dashing'], 1), 'galactic');
    assert.equal(distroOf([undefined], 4), 'galactic');
    assert.equal(distroOf([], 1), 'galactic');
    assert.equal(distroOf([], 5), 'humble');
    assert.equal(distroOf([], undefined), 'humble');
  });

  test('a type name is only ever a package and a message: no path leads out of the definitions', () => {
    const standard = new StandardDefinitions('humble');
    assert.match(standard.textOf('sensor_msgs/msg/Imu')!, /MSG: std_msgs\/Header/);
    assert.equal(standard.textOf('std_msgs/String'), standard.textOf('std_msgs/msg/String'));
    for (const hostile of [
      '../../../package',
      'sensor_msgs/msg/../../../LICENSE',
      'sensor_msgs/srv/Imu',
      '/etc/passwd',
      '',
    ])
      assert.equal(standard.textOf(hostile), undefined, hostile);
    assert.equal(standard.textOf('no_such_msgs/msg/Thing'), undefined);
  });
});
