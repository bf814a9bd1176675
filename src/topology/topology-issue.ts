// A problem with a topology file, at the path of the field it is about (the loader turns the path
// into a line and column).
export interface TopologyIssue {
  readonly path: PropertyKey[];
  readonly message: string;
}
