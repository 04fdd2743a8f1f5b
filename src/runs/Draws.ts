/**
 * Draw rotations (decisions.md, `draws`): draw d lists the options shifted by d, so position i of draw d shows
 * option (i + d) mod n. Each draw's probabilities are mapped back to the options' own order and averaged, which
 * cancels a model's preference for early letters.
 */

/** The options in the order draw `draw` lists them. */
export const rotateOptions = <A>(options: ReadonlyArray<A>, draw: number): ReadonlyArray<A> => {
  const n = options.length
  return options.map((_, position) => options[(position + draw) % n]!)
}

/** One draw's reading: its rotation and its probabilities in that rotation's order. */
export interface DrawReading {
  readonly draw: number
  readonly probabilities: ReadonlyArray<number>
}

/**
 * The mean, option by option, of several draws' probabilities (each of `optionCount`, in its draw's order), in the
 * options' own order: position i of draw d is option (i + d) mod n.
 */
export const averageDraws = (optionCount: number, readings: ReadonlyArray<DrawReading>): ReadonlyArray<number> => {
  const sums = new Array<number>(optionCount).fill(0)
  for (const { draw, probabilities } of readings) {
    probabilities.forEach((p, position) => {
      const option = (position + draw) % optionCount
      sums[option] = sums[option]! + p
    })
  }
  return readings.length === 0 ? sums : sums.map((sum) => sum / readings.length)
}
