/**
 * The links a {@link LiveList} keeps on each of its members. Only the list writes them; a member
 * starts unlisted: both links null, `listed` false.
 */
export interface ListMember<T> {
  listPrev: T | null;
  listNext: T | null;
  listed: boolean;
}

/**
 * The things in flight that a long-lived object must keep track of, and that come and go at request
 * rate (the deadlines armed on a server's wheel, the SSE streams being relayed): a doubly linked
 * list through the members themselves. Adding and removing allocate nothing, and a removed member
 * keeps no link.
 *
 * Why not a Set: under that churn a Set reallocates its hash table again and again, and V8 leaves
 * each outgrown table in the old generation still pointing at the members it held and at its
 * successor. A scavenge takes every pointer from an old object into the young generation as live
 * (it cannot tell a dead old table from a live one), so everything those members reach (a request's
 * response, its upstream request, its relay) survived and was promoted: in `toolpin serve` under
 * load every call's objects reached the old generation, and young collections took 10-15 ms
 * instead of about 1 (docs/benchmark.md, "Promoted through a Set").
 */
export class LiveList<T extends ListMember<T>> {
  #head: T | null = null;
  #size = 0;

  /** How many members the list holds. */
  get size(): number {
    return this.#size;
  }

  /** Adds `member` (nothing if it is listed already). */
  add(member: T): void {
    if (member.listed) return;
    member.listed = true;
    member.listPrev = null;
    member.listNext = this.#head;
    if (this.#head !== null) this.#head.listPrev = member;
    this.#head = member;
    this.#size += 1;
  }

  /** Removes `member` and clears its links (nothing if it is not listed). */
  remove(member: T): void {
    if (!member.listed) return;
    const { listPrev: prev, listNext: next } = member;
    if (prev === null) this.#head = next;
    else prev.listNext = next;
    if (next !== null) next.listPrev = prev;
    member.listPrev = null;
    member.listNext = null;
    member.listed = false;
    this.#size -= 1;
  }

  /** The members, newest first, in an array (the list may change while the caller acts on them). */
  toArray(): T[] {
    return this.filter(() => true);
  }

  /** The members for which `keep` is true, newest first (the list may change while the caller acts on them). */
  filter(keep: (member: T) => boolean): T[] {
    const kept: T[] = [];
    for (let member = this.#head; member !== null; member = member.listNext)
      if (keep(member)) kept.push(member);
    return kept;
  }
}
