/**
 * The VLink library version our files claim. VLink readers reject a different major, so this stays 2.x; it is the
 * format version, independent of this package's npm version.
 */
export const FORMAT_VERSION = Object.freeze({ major: 2, minor: 1, patch: 0 });
export const FORMAT_VERSION_TEXT = `${FORMAT_VERSION.major}.${FORMAT_VERSION.minor}.${FORMAT_VERSION.patch}`;
