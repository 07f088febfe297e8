/**
 * The typed columns a url's decoded messages flatten into (README "Columns"). Nested objects become one column per
 * leaf, named `<url>.<field>.<sub>`; a message that is not an object (text, a JSON number) is one column named `<url>`.
 * Arrays, and values that are null in the message the layout is taken from, are `json` columns (the value as JSON).
 */
export type ColumnType = 'timestamp' | 'double' | 'string' | 'boolean' | 'json';

/** One output column, as the JSON description lists it. */
export interface AlignColumn {
  name: string;
  type: ColumnType;
  /** `time`: the base time; `sampleTime`: the time of the url's sample the row used; `field`: a decoded field. */
  role: 'time' | 'sampleTime' | 'field';
  /** The url the column comes from (absent for the base time of a fixed-rate base). */
  url?: string;
  /** The field path inside the decoded message, dot-separated; empty for a message that is not an object. */
  field?: string;
}

/** A node of a url's field tree: a leaf holds its column's index in the url's values. */
interface FieldNode {
  children: Map<string, FieldNode> | undefined;
  index: number;
  type: ColumnType;
}

/** What reading one message into a url's columns ran into. */
export interface FlattenIssues {
  /** Fields the first message did not have (no column for them), by dotted path. */
  unknownFields: Map<string, number>;
  /** Values of another type than their column (written as null). */
  typeMismatches: number;
}

const isObject = (v: unknown): v is Record<string, unknown> =>
  typeof v === 'object' && v !== null && !Array.isArray(v) && !ArrayBuffer.isView(v);

function leafType(value: unknown): ColumnType {
  if (typeof value === 'number') return 'double';
  if (typeof value === 'string') return 'string';
  if (typeof value === 'boolean') return 'boolean';
  return 'json';
}

function fits(type: ColumnType, value: unknown): boolean {
  switch (type) {
    case 'double':
      return typeof value === 'number';
    case 'string':
      return typeof value === 'string';
    case 'boolean':
      return typeof value === 'boolean';
    default:
      return true;
  }
}

/** A url's fields, taken from one decoded message (its first), and the reader of later messages into them. */
export class UrlLayout {
  readonly url: string;
  /** The url's field columns, in the order of the message's fields. */
  readonly fields: AlignColumn[] = [];
  private readonly root: FieldNode;

  constructor(url: string, first: unknown) {
    this.url = url;
    this.root = this.build(first, []);
  }

  private build(value: unknown, path: string[]): FieldNode {
    if (isObject(value)) {
      const children = new Map<string, FieldNode>();
      for (const key of Object.keys(value)) children.set(key, this.build(value[key], [...path, key]));
      return { children, index: -1, type: 'json' };
    }
    const field = path.join('.');
    const type = leafType(value);
    this.fields.push({ name: field ? `${this.url}.${field}` : this.url, type, role: 'field', url: this.url, field });
    return { children: undefined, index: this.fields.length - 1, type };
  }

  /** The message's values in column order: absent fields and values of the wrong type are null. */
  read(value: unknown, issues: FlattenIssues): unknown[] {
    const out: unknown[] = new Array(this.fields.length).fill(null);
    this.readNode(this.root, value, out, issues, '');
    return out;
  }

  private readNode(node: FieldNode, value: unknown, out: unknown[], issues: FlattenIssues, path: string): void {
    if (node.children === undefined) {
      if (value === null || value === undefined) return;
      if (fits(node.type, value)) out[node.index] = value;
      else issues.typeMismatches++;
      return;
    }
    if (!isObject(value)) {
      if (value !== null && value !== undefined) issues.typeMismatches++;
      return;
    }
    for (const key of Object.keys(value)) {
      const child = node.children.get(key);
      if (child) this.readNode(child, value[key], out, issues, path ? `${path}.${key}` : key);
      else {
        const at = path ? `${path}.${key}` : key;
        issues.unknownFields.set(at, (issues.unknownFields.get(at) ?? 0) + 1);
      }
    }
  }
}
