import { isObject, leafOf, type Structure } from './data-structure.js';

/**
 * Whether a url's `data` structure holds every field of a decoded message. The structure is taken from the url's
 * first message, and a later one may have more: flatbuffers leaves out unset fields, protobuf unset message and
 * `optional` fields, JSON and CBOR anything. json_transform and the typed writer would drop such a field silently,
 * so the export widens the structure ({@link widen}) or counts the message. Null fields fit anywhere (they hold
 * nothing to lose); a field whose value does not have the structure's type is not this check's business (it is
 * written as JSON text where the structure says `JSON`, converted or NULL as json_transform does otherwise).
 */
export function fits(structure: Structure, value: unknown): boolean {
  if (typeof structure === 'string') return true;
  if (Array.isArray(structure)) {
    const item = structure[0]!;
    if (typeof item === 'string' || !Array.isArray(value)) return true;
    for (const element of value) if (!fits(item, element)) return false;
    return true;
  }
  if (!isObject(value)) return true;
  for (const key in value) {
    const field = value[key];
    if (field === null || field === undefined) continue;
    // hasOwn: a field named `constructor` or `__proto__` must be one of the structure's, not something inherited.
    if (!Object.hasOwn(structure, key)) return false;
    if (typeof field === 'object' && !fits(structure[key]!, field)) return false;
  }
  return true;
}

/**
 * The structure with the fields of `value` it lacked added (after its own, at every depth: nested objects, objects
 * in lists), or the same object when none can be: a field whose name differs from one already there only in case
 * (DuckDB's STRUCT names are case-insensitive) or is empty cannot be a field of its own; {@link fits} then still
 * says no, and the caller counts the message. The fields already there keep their types, so the part files written
 * before stay compatible: engines merge the STRUCTs of a url's files by field name (union_by_name, mergeSchema).
 */
export function widen(structure: Structure, value: unknown): Structure {
  if (typeof structure === 'string') return structure;
  if (Array.isArray(structure)) {
    const item = structure[0]!;
    if (typeof item === 'string' || !Array.isArray(value)) return structure;
    let wider: Structure = item;
    for (const element of value) wider = widen(wider, element);
    return wider === item ? structure : [wider];
  }
  if (!isObject(value)) return structure;
  let out: [string, Structure][] | undefined;
  const names = new Set(Object.keys(structure).map((name) => name.toLowerCase()));
  const entries = () => (out ??= Object.entries(structure));
  for (const key in value) {
    const field = value[key];
    if (field === null || field === undefined) continue;
    if (Object.hasOwn(structure, key)) {
      const inner = structure[key]!;
      const wider = typeof field === 'object' ? widen(inner, field) : inner;
      if (wider !== inner) {
        const list = entries();
        list[list.findIndex(([name]) => name === key)]![1] = wider;
      }
    } else if (key !== '' && !names.has(key.toLowerCase())) {
      names.add(key.toLowerCase());
      entries().push([key, leafOf(field)]);
    }
  }
  // fromEntries: own data properties, a field named `__proto__` included.
  return out === undefined ? structure : Object.fromEntries(out);
}
