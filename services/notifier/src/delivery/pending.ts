/** One background promise at a time whose failure is rethrown by the next `wait()` (never unhandled). */
export class Pending {
  private current: Promise<unknown> | null = null;
  start(p: Promise<unknown>): void {
    this.current = p.then(
      () => null,
      (err: unknown) => ({ err }),
    );
  }
  async wait(): Promise<void> {
    const c = this.current;
    this.current = null;
    const r = (await c) as { err: unknown } | null;
    if (r) throw r.err;
  }
}
