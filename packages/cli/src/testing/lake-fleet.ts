/**
 * The lake package's generated fleet (its src/testing/query-fixture.ts, built to dist-test): one writer of test
 * lakes for the lake, CLI and server tests (test-only).
 */
export interface Fleet {
  writeFleet(dir: string, bags?: number, scale?: number): Promise<{ catalog: string; export: string }>;
  fleet: {
    bagId(i: number): string;
    imuCount(i: number): number;
    lidarCount(i: number): number;
  };
}

export async function lakeFleet(): Promise<Fleet> {
  const root = import.meta.resolve('@vlink/bag-lake/package.json');
  return (await import(new URL('./dist-test/testing/query-fixture.js', root).href)) as Fleet;
}
