/**
 * Kubernetes resource quantities ("250m", "1.5", "512Mi", "1e3") as plain numbers in base units:
 * CPU in millicores, everything else in units (bytes for memory, a count for pods). Pure.
 * Precision is that of a double, which is enough to compare requests with allocatable.
 */

const BINARY: Record<string, number> = {
  Ki: 2 ** 10,
  Mi: 2 ** 20,
  Gi: 2 ** 30,
  Ti: 2 ** 40,
  Pi: 2 ** 50,
  Ei: 2 ** 60,
};

const DECIMAL: Record<string, number> = {
  n: 1e-9,
  u: 1e-6,
  m: 1e-3,
  '': 1,
  k: 1e3,
  M: 1e6,
  G: 1e9,
  T: 1e12,
  P: 1e15,
  E: 1e18,
};

const QUANTITY = /^([+-]?(?:\d+\.?\d*|\.\d+))(?:([eE][+-]?\d+)|(Ki|Mi|Gi|Ti|Pi|Ei|n|u|m|k|M|G|T|P|E))?$/;

/** The value of a quantity in base units, or undefined when it is not a quantity. */
export function parseQuantity(text: string | number | undefined): number | undefined {
  if (typeof text === 'number') return Number.isFinite(text) ? text : undefined;
  if (typeof text !== 'string') return undefined;
  const m = QUANTITY.exec(text.trim());
  if (!m) return undefined;
  const base = Number(m[1]);
  if (m[2] !== undefined) return base * 10 ** Number(m[2].slice(1));
  const suffix = m[3] ?? '';
  return base * (BINARY[suffix] ?? DECIMAL[suffix] ?? 1);
}

/** CPU as integer millicores ("100m" → 100, "2" → 2000); undefined when unparseable. */
export function cpuMillis(text: string | number | undefined): number | undefined {
  const v = parseQuantity(text);
  // Kubernetes rounds CPU up to the millicore.
  return v === undefined ? undefined : Math.ceil(Math.round(v * 1e6) / 1e3);
}
