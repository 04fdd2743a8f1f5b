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

/** Probabilities read in draw `draw`'s order, put back in the options' own order. */
export const unrotateProbabilities = (probabilities: ReadonlyArray<number>, draw: number): ReadonlyArray<number> => {
  const n = probabilities.length
  const own = new Array<number>(n).fill(0)
  probabilities.forEach((p, position) => {
    own[(position + draw) % n] = p
  })
  return own
}

/** One draw's reading: its rotation and its probabilities in that rotation's order. */
export interface DrawReading {
  readonly draw: number
  readonly probabilities: ReadonlyArray<number>
}

/** The mean, option by option, of several draws' probabilities, in the options' own order. */
export const averageDraws = (optionCount: number, readings: ReadonlyArray<DrawReading>): ReadonlyArray<number> => {
  const sums = new Array<number>(optionCount).fill(0)
  for (const reading of readings) {
    unrotateProbabilities(reading.probabilities, reading.draw).forEach((p, index) => {
      sums[index] = sums[index]! + p
    })
  }
  return readings.length === 0 ? sums : sums.map((sum) => sum / readings.length)
}
