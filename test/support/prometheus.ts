/**
 * A strict reader of the Prometheus text exposition format (version 0.0.4), for the tests of
 * `/metrics`: https://prometheus.io/docs/instrumenting/exposition_formats/#text-based-format.
 * Written here because the npm parser of this format (parse-prometheus-text-format 1.1.1) merges
 * the series of a labelled histogram into one and drops their labels.
 *
 * It refuses what the format forbids rather than guessing: a malformed line, a label value with an
 * unknown escape, a family's second TYPE, a TYPE after the family's samples, a family whose samples
 * are not together, a sample name its family's type does not allow, a repeated series.
 */

export type MetricType = "counter" | "gauge" | "histogram" | "summary" | "untyped"

export interface Sample {
  /** The sample's own name: `x_bucket`, `x_sum`, `x_count` in histogram `x`. */
  readonly name: string
  readonly labels: Readonly<Record<string, string>>
  readonly value: number
}

export interface Family {
  readonly name: string
  readonly type: MetricType
  readonly help: string | undefined
  readonly samples: ReadonlyArray<Sample>
}

const METRIC_NAME = /^[a-zA-Z_:][a-zA-Z0-9_:]*/
const LABEL_NAME = /^[a-zA-Z_][a-zA-Z0-9_]*/
const TYPES = new Set<MetricType>(["counter", "gauge", "histogram", "summary", "untyped"])
/** The sample names a family of each type exposes, after its name. */
export const SUFFIXES: Readonly<Record<MetricType, ReadonlyArray<string>>> = {
  counter: [""],
  gauge: [""],
  untyped: [""],
  histogram: ["_bucket", "_sum", "_count"],
  summary: ["", "_sum", "_count"]
}

class ExpositionError extends Error {
  constructor(line: number, message: string) {
    super(`line ${line}: ${message}`)
  }
}

/** Go's ParseFloat, which the format names: decimal or exponent notation, and NaN and Inf in any case. */
const parseValue = (text: string, line: number): number => {
  if (/^nan$/i.test(text)) return Number.NaN
  if (/^\+?inf(inity)?$/i.test(text)) return Number.POSITIVE_INFINITY
  if (/^-inf(inity)?$/i.test(text)) return Number.NEGATIVE_INFINITY
  if (!/^[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?$/.test(text)) throw new ExpositionError(line, `'${text}' is not a value`)
  return Number(text)
}

/** `\\`, `\"` and `\n` are the only escapes in a label value; HELP allows `\\` and `\n`. */
const unescape = (text: string, quotes: boolean, line: number): string =>
  text.replace(/\\(.)/g, (_, escaped: string) => {
    if (escaped === "\\") return "\\"
    if (escaped === "n") return "\n"
    if (escaped === '"' && quotes) return '"'
    throw new ExpositionError(line, `unknown escape \\${escaped}`)
  })

/** `{name="value",...}` from the start of `rest`; returns the labels and what follows the brace. */
const parseLabels = (rest: string, line: number): { labels: Record<string, string>; rest: string } => {
  const labels: Record<string, string> = {}
  let at = 1
  const skipBlanks = () => {
    while (rest[at] === " " || rest[at] === "\t") at++
  }
  for (;;) {
    skipBlanks()
    if (rest[at] === "}") return { labels, rest: rest.slice(at + 1) }
    const name = LABEL_NAME.exec(rest.slice(at))?.[0]
    if (name === undefined) throw new ExpositionError(line, "expected a label name")
    at += name.length
    skipBlanks()
    if (rest[at] !== "=") throw new ExpositionError(line, `expected '=' after label ${name}`)
    at++
    skipBlanks()
    if (rest[at] !== '"') throw new ExpositionError(line, `expected a quoted value for label ${name}`)
    let end = at + 1
    while (end < rest.length && rest[end] !== '"') end += rest[end] === "\\" ? 2 : 1
    if (end >= rest.length) throw new ExpositionError(line, `unterminated value of label ${name}`)
    if (Object.hasOwn(labels, name)) throw new ExpositionError(line, `label ${name} repeated`)
    labels[name] = unescape(rest.slice(at + 1, end), true, line)
    at = end + 1
    skipBlanks()
    if (rest[at] === ",") at++
    else if (rest[at] !== "}") throw new ExpositionError(line, "expected ',' or '}' after a label")
  }
}

const seriesKey = (name: string, labels: Readonly<Record<string, string>>) =>
  `${name}${JSON.stringify(Object.entries(labels).sort(([a], [b]) => (a < b ? -1 : 1)))}`

/** Every family of the exposition, by name. */
export const parseExposition = (text: string): ReadonlyMap<string, Family> => {
  if (text !== "" && !text.endsWith("\n")) throw new ExpositionError(0, "the exposition must end with a line feed")
  const families = new Map<string, { name: string; type: MetricType; help: string | undefined; samples: Array<Sample> }>()
  const declared = new Map<string, { type?: MetricType; help?: string }>()
  const series = new Set<string>()
  let current: string | undefined

  const familyOf = (sampleName: string, line: number) => {
    // the family is the declared name the sample's name extends with a suffix its type allows
    for (const [name, { type = "untyped" }] of declared) {
      for (const suffix of SUFFIXES[type]) if (sampleName === `${name}${suffix}`) return { name, type }
    }
    if (declared.has(sampleName)) throw new ExpositionError(line, `${sampleName} is not a sample name of its family's type`)
    return { name: sampleName, type: "untyped" as const }
  }

  text.split("\n").forEach((raw, index) => {
    const line = index + 1
    if (raw.trim() === "") return
    if (raw.startsWith("#")) {
      const match = /^#[ \t]+(HELP|TYPE)[ \t]+([^ \t]+)(?:[ \t]+(.*))?$/.exec(raw)
      if (match === null) return // a comment
      const [, keyword, name, rest = ""] = match
      if (!METRIC_NAME.test(name) || METRIC_NAME.exec(name)![0] !== name) throw new ExpositionError(line, `'${name}' is not a metric name`)
      const entry = declared.get(name) ?? {}
      if (families.has(name) && current !== name) throw new ExpositionError(line, `${keyword} of ${name} after its samples`)
      if (keyword === "HELP") {
        if (entry.help !== undefined) throw new ExpositionError(line, `second HELP of ${name}`)
        entry.help = unescape(rest, false, line)
      } else {
        if (entry.type !== undefined) throw new ExpositionError(line, `second TYPE of ${name}`)
        if (families.get(name)?.samples.length) throw new ExpositionError(line, `TYPE of ${name} after its samples`)
        if (!TYPES.has(rest as MetricType)) throw new ExpositionError(line, `unknown type '${rest}'`)
        entry.type = rest as MetricType
      }
      declared.set(name, entry)
      return
    }
    const name = METRIC_NAME.exec(raw)?.[0]
    if (name === undefined) throw new ExpositionError(line, "expected a metric name")
    let rest = raw.slice(name.length)
    let labels: Record<string, string> = {}
    if (rest.startsWith("{")) ({ labels, rest } = parseLabels(rest, line))
    const fields = rest.trim().split(/[ \t]+/)
    if (!/^[ \t]/.test(rest) || fields.length < 1 || fields.length > 2) throw new ExpositionError(line, "expected a value and an optional timestamp")
    const value = parseValue(fields[0], line)
    if (fields.length === 2 && !/^-?\d+$/.test(fields[1])) throw new ExpositionError(line, `'${fields[1]}' is not a timestamp`)
    const family = familyOf(name, line)
    if (current !== family.name && families.has(family.name)) throw new ExpositionError(line, `the samples of ${family.name} are not together`)
    current = family.name
    const key = seriesKey(name, labels)
    if (series.has(key)) throw new ExpositionError(line, `series ${key} repeated`)
    series.add(key)
    let entry = families.get(family.name)
    if (entry === undefined) {
      entry = { name: family.name, type: family.type, help: declared.get(family.name)?.help, samples: [] }
      families.set(family.name, entry)
    }
    entry.samples.push({ name, labels, value })
  })
  // a family declared with no samples is still a family (a labelled metric nothing has touched)
  for (const [name, { type = "untyped", help }] of declared) if (!families.has(name)) families.set(name, { name, type, help, samples: [] })
  return families
}

export interface HistogramSeries {
  readonly labels: Readonly<Record<string, string>>
  /** Upper bound → cumulative count, in ascending bounds, `+Inf` last. */
  readonly buckets: ReadonlyArray<readonly [number, number]>
  readonly sum: number
  readonly count: number
}

/**
 * A histogram family's series, checked as the format requires: each has buckets with ascending
 * bounds and non-decreasing counts ending at `+Inf`, whose count is the series' `_count`.
 */
export const histogramSeries = (family: Family): ReadonlyArray<HistogramSeries> => {
  if (family.type !== "histogram") throw new Error(`${family.name} is a ${family.type}, not a histogram`)
  const byLabels = new Map<string, { labels: Record<string, string>; buckets: Array<[number, number]>; sum?: number; count?: number }>()
  for (const sample of family.samples) {
    const { le, ...labels } = sample.labels
    const key = seriesKey("", labels)
    const entry = byLabels.get(key) ?? { labels, buckets: [] }
    byLabels.set(key, entry)
    if (sample.name === `${family.name}_bucket`) {
      if (le === undefined) throw new Error(`${family.name}: a bucket without le`)
      entry.buckets.push([parseValue(le, 0), sample.value])
    } else if (le !== undefined) {
      throw new Error(`${family.name}: le on ${sample.name}`)
    } else if (sample.name === `${family.name}_sum`) {
      entry.sum = sample.value
    } else {
      entry.count = sample.value
    }
  }
  return [...byLabels.values()].map(({ labels, buckets, sum, count }) => {
    const what = `${family.name}${JSON.stringify(labels)}`
    if (sum === undefined || count === undefined) throw new Error(`${what}: no _sum or _count`)
    if (buckets.at(-1)?.[0] !== Number.POSITIVE_INFINITY) throw new Error(`${what}: the last bucket is not +Inf`)
    if (buckets.at(-1)![1] !== count) throw new Error(`${what}: the +Inf bucket is not the count`)
    for (let i = 1; i < buckets.length; i++) {
      if (!(buckets[i][0] > buckets[i - 1][0])) throw new Error(`${what}: bucket bounds not ascending`)
      if (buckets[i][1] < buckets[i - 1][1]) throw new Error(`${what}: bucket counts decrease`)
    }
    return { labels, buckets, sum, count }
  })
}
