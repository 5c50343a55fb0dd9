/**
 * Where a decoder is in the request (`resource_logs[0].scope_logs[1].log_records[3].body`), kept as
 * a stack while decoding and written out only when an error names it.
 */
export class FieldPath {
  private readonly names: string[] = [];
  private readonly indexes: number[] = [];

  /** Enters `name` (the element at `index` of a repeated field, when given). */
  push(name: string, index = -1): void {
    this.names.push(name);
    this.indexes.push(index);
  }

  pop(): void {
    this.names.pop();
    this.indexes.pop();
  }

  toString(): string {
    return this.names.map((name, i) => ((this.indexes[i] as number) >= 0 ? `${name}[${this.indexes[i]}]` : name)).join('.');
  }
}
