// A small typed event emitter, so the library needs nothing from node:events (it runs on Bun and
// anything with fetch). A listener that throws is the program's bug: it surfaces as an uncaught
// exception, as with EventEmitter, without breaking the stream that delivered the event.

export class Emitter<Events extends object> {
  private readonly listeners = new Map<keyof Events, Set<(value: never) => void>>();

  /** Adds a listener; returns a function that removes it. */
  on<K extends keyof Events>(event: K, listener: (value: Events[K]) => void): () => void {
    let set = this.listeners.get(event);
    if (set === undefined) this.listeners.set(event, (set = new Set()));
    set.add(listener);
    return () => this.off(event, listener);
  }

  off<K extends keyof Events>(event: K, listener: (value: Events[K]) => void): void {
    this.listeners.get(event)?.delete(listener);
  }

  protected emit<K extends keyof Events>(event: K, value: Events[K]): void {
    for (const listener of [...(this.listeners.get(event) ?? [])]) {
      try {
        (listener as (value: Events[K]) => void)(value);
      } catch (e) {
        queueMicrotask(() => {
          throw e;
        });
      }
    }
  }
}
