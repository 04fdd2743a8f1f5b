/**
 * The training's only source of randomness: a small seeded generator (splitmix32), so the same seed gives the same
 * stream on every machine and `npm run router:train` rebuilds the same weights bit for bit. `Math.random` is never
 * used by the classifier.
 */

/** A deterministic stream of numbers in [0, 1). */
export interface SeededRandom {
  /** The next number in [0, 1). */
  readonly next: () => number
  /** A whole number in [0, bound). */
  readonly below: (bound: number) => number
}

/** A generator seeded with a 32-bit number. */
export const seededRandom = (seed: number): SeededRandom => {
  let state = seed >>> 0
  const nextUint = (): number => {
    state = (state + 0x9e3779b9) >>> 0
    let z = state
    z = Math.imul(z ^ (z >>> 16), 0x85ebca6b) >>> 0
    z = Math.imul(z ^ (z >>> 13), 0xc2b2ae35) >>> 0
    return (z ^ (z >>> 16)) >>> 0
  }
  const next = (): number => nextUint() / 4294967296
  return { next, below: (bound) => Math.floor(next() * bound) }
}

/** A 32-bit FNV-1a hash of a string, for seeds derived from names. */
export const stableHash = (text: string): number => {
  let hash = 0x811c9dc5
  for (let index = 0; index < text.length; index++) {
    hash ^= text.charCodeAt(index)
    hash = Math.imul(hash, 0x01000193) >>> 0
  }
  return hash >>> 0
}

/** A shuffled copy of `items` (Fisher-Yates over the generator). */
export const shuffled = <A>(items: ReadonlyArray<A>, random: SeededRandom): Array<A> => {
  const copy = [...items]
  for (let index = copy.length - 1; index > 0; index--) {
    const other = random.below(index + 1)
    const item = copy[index]!
    copy[index] = copy[other]!
    copy[other] = item
  }
  return copy
}
