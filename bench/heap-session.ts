export async function retainedBySession(_count: number, _heap: () => number, _keep: unknown[]): Promise<number> {
  throw new Error("todo");
}
