/**
 * The figures issue 13 asks the benchmarks to reach, each printed as met or not met with what was
 * measured and, when not met, where the time goes.
 */
export interface TargetResult {
  target: string;
  /** `≥ 10 000 msg/s`, `< 50 ms`… */
  required: string;
  measured: string;
  value: number;
  threshold: number;
  met: boolean;
  /** Where the time goes (printed when not met; kept in the JSON either way). */
  breakdown: string[];
}

interface TargetDefinition {
  target: string;
  value: number;
  threshold: number;
  format: (value: number) => string;
  breakdown: string[];
}

/** Met when `value ≥ threshold` (NaN: not met). */
export function atLeast(definition: TargetDefinition): TargetResult {
  return result(definition, '≥', definition.value >= definition.threshold);
}

/** Met when `value < threshold` (NaN: not met). */
export function below(definition: TargetDefinition): TargetResult {
  return result(definition, '<', definition.value < definition.threshold);
}

function result(definition: TargetDefinition, comparison: string, met: boolean): TargetResult {
  return {
    target: definition.target,
    required: `${comparison} ${definition.format(definition.threshold)}`,
    measured: definition.format(definition.value),
    value: definition.value,
    threshold: definition.threshold,
    met,
    breakdown: definition.breakdown,
  };
}

/** The targets' lines, headed by the issue that sets them (13 unless said). */
export function targetLines(results: readonly TargetResult[], issue = 13): string[] {
  const lines = [
    `\nTargets (issue ${issue}): ${results.filter((entry) => entry.met).length} of ${results.length} met`,
  ];
  for (const entry of results) {
    lines.push(
      `  ${entry.met ? 'MET    ' : 'NOT MET'}  ${entry.target}: ${entry.measured} (target ${entry.required})`,
    );
    if (!entry.met) for (const line of entry.breakdown) lines.push(`      ${line}`);
  }
  return lines;
}
