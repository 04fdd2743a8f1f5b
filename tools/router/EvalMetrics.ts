/**
 * The evaluation's figures over predictions with known labels: family accuracy, task-type top-1 and top-5
 * accuracy, macro-F1 over the task types that occur, expected calibration error of the top family probability (ten
 * equal-width bins, |accuracy - confidence| weighted by the bin's share), the family confusion matrix, and per-type
 * precision, recall and F1. Rows whose label has no task type count for the family figures only.
 */

/** One prediction: the task-type probabilities (calibrated) with the true labels as indices. */
export interface ScoredPrediction {
  readonly types: Float64Array
  readonly family: number
  /** The true task type's index, or -1 when the row has a family only. */
  readonly taskType: number
}

/** Per-type quality. */
export interface TypeQuality {
  readonly support: number
  readonly precision: number
  readonly recall: number
  readonly f1: number
}

/** One bin of the reliability table: predictions whose top family probability is in [from, to). */
export interface ReliabilityBin {
  readonly from: number
  readonly to: number
  readonly count: number
  readonly accuracy: number
  readonly confidence: number
}

/** All figures of one evaluation. */
export interface EvalReport {
  readonly rows: number
  readonly familyAccuracy: number
  readonly top1: number
  readonly top5: number
  readonly macroF1: number
  readonly ece: number
  readonly reliability: ReadonlyArray<ReliabilityBin>
  /** confusion[true][predicted], families in label order. */
  readonly confusion: ReadonlyArray<ReadonlyArray<number>>
  readonly perType: ReadonlyArray<TypeQuality>
}

const argmax = (values: ArrayLike<number>): number => {
  let best = 0
  for (let k = 1; k < values.length; k++) if (values[k]! > values[best]!) best = k
  return best
}

const rankOf = (values: Float64Array, index: number): number => {
  let rank = 0
  for (let k = 0; k < values.length; k++) if (values[k]! > values[index]! || (values[k] === values[index] && k < index)) rank++
  return rank
}

/** The reliability table of (confidence, correct) pairs in `bins` equal-width bins (empty bins left out). */
export const reliabilityBins = (pairs: ReadonlyArray<readonly [number, boolean]>, bins = 10): Array<ReliabilityBin> => {
  const confidence = new Float64Array(bins)
  const correct = new Float64Array(bins)
  const counts = new Float64Array(bins)
  for (const [p, right] of pairs) {
    const bin = Math.min(bins - 1, Math.floor(p * bins))
    confidence[bin] = confidence[bin]! + p
    correct[bin] = correct[bin]! + (right ? 1 : 0)
    counts[bin] = counts[bin]! + 1
  }
  return Array.from({ length: bins }, (_, bin) => bin).filter((bin) => counts[bin]! > 0).map((bin) => ({
    from: bin / bins,
    to: (bin + 1) / bins,
    count: counts[bin]!,
    accuracy: correct[bin]! / counts[bin]!,
    confidence: confidence[bin]! / counts[bin]!
  }))
}

/** Expected calibration error over (confidence, correct) pairs, in `bins` equal-width bins. */
export const expectedCalibrationError = (pairs: ReadonlyArray<readonly [number, boolean]>, bins = 10): number =>
  reliabilityBins(pairs, bins).reduce((sum, bin) => sum + (bin.count / pairs.length) * Math.abs(bin.accuracy - bin.confidence), 0)

/** Computes every figure; `familyOf` maps task-type index to family index. */
export const evaluate = (predictions: ReadonlyArray<ScoredPrediction>, familyOf: Int32Array, families: number): EvalReport => {
  const confusion = Array.from({ length: families }, () => new Array<number>(families).fill(0))
  const types = familyOf.length
  const truePositive = new Float64Array(types)
  const predicted = new Float64Array(types)
  const support = new Float64Array(types)
  let familyRight = 0
  let typed = 0
  let top1 = 0
  let top5 = 0
  const pairs: Array<readonly [number, boolean]> = []
  for (const prediction of predictions) {
    const familyProbabilities = new Float64Array(families)
    prediction.types.forEach((p, k) => {
      familyProbabilities[familyOf[k]!] = familyProbabilities[familyOf[k]!]! + p
    })
    const family = argmax(familyProbabilities)
    confusion[prediction.family]![family]! += 1
    if (family === prediction.family) familyRight++
    pairs.push([familyProbabilities[family]!, family === prediction.family])
    if (prediction.taskType < 0) continue
    typed++
    const top = argmax(prediction.types)
    predicted[top] = predicted[top]! + 1
    support[prediction.taskType] = support[prediction.taskType]! + 1
    if (top === prediction.taskType) {
      top1++
      truePositive[top] = truePositive[top]! + 1
    }
    if (rankOf(prediction.types, prediction.taskType) < 5) top5++
  }
  const perType = Array.from({ length: types }, (_, k): TypeQuality => {
    const precision = predicted[k]! === 0 ? 0 : truePositive[k]! / predicted[k]!
    const recall = support[k]! === 0 ? 0 : truePositive[k]! / support[k]!
    return { support: support[k]!, precision, recall, f1: precision + recall === 0 ? 0 : (2 * precision * recall) / (precision + recall) }
  })
  const present = perType.filter((quality) => quality.support > 0)
  return {
    rows: predictions.length,
    familyAccuracy: familyRight / Math.max(1, predictions.length),
    top1: top1 / Math.max(1, typed),
    top5: top5 / Math.max(1, typed),
    macroF1: present.reduce((sum, quality) => sum + quality.f1, 0) / Math.max(1, present.length),
    ece: expectedCalibrationError(pairs),
    reliability: reliabilityBins(pairs),
    confusion,
    perType
  }
}
