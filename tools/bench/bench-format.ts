/** A whole number with thin groups (`12 345`), or `–` when not measured. */
export const integer = (value: number): string =>
  Number.isFinite(value) ? Math.round(value).toLocaleString('en-US').replace(/,/g, ' ') : '–';

/** A number with `digits` decimals, or `–` when not measured. */
export const fixed = (value: number, digits: number): string =>
  Number.isFinite(value) ? value.toFixed(digits) : '–';
