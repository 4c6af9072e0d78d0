/**
 * Value conventions shared by both backends, so a row read through PGlite is
 * byte-for-byte the row read through pg. Sessions run with TimeZone=UTC, so
 * timestamptz text is always "YYYY-MM-DD HH:MM:SS[.ffffff]+00".
 */
export const OID = {
  INT8: 20,
  TIMESTAMPTZ: 1184,
  TIMESTAMP: 1114,
  NUMERIC: 1700,
  DATE: 1082,
  INTERVAL: 1186,
} as const;

/** "2026-11-22 05:56:51.123456+00" → "2026-11-22T05:56:51.123456Z" (keeps microseconds). */
export function timestamptzToIso(text: string): string {
  // Years past 9999 or BC dates are not produced by our validators; keep the text as is then.
  if (text.length < 22 || text.charCodeAt(10) !== 32) return text;
  const tz = text.endsWith('+00') ? 3 : 0;
  if (tz === 0) return text;
  return text.slice(0, 10) + 'T' + text.slice(11, text.length - 3) + 'Z';
}

const identity = (text: string): string => text;

/** Parsers by type OID; anything absent uses the driver's default. */
export const TEXT_PARSERS: Record<number, (text: string) => unknown> = {
  [OID.INT8]: identity,
  [OID.NUMERIC]: identity,
  [OID.TIMESTAMPTZ]: timestamptzToIso,
  [OID.TIMESTAMP]: identity,
  [OID.DATE]: identity,
  [OID.INTERVAL]: identity,
};

/**
 * Array type OID → element OID for the types above. PGlite applies the element
 * parser to arrays itself; pg's defaults would give numbers, Dates and interval
 * objects, so pg-client parses these arrays with the element parsers.
 */
export const ARRAY_ELEMENT_OID: Record<number, number> = {
  1016: OID.INT8,
  1185: OID.TIMESTAMPTZ,
  1115: OID.TIMESTAMP,
  1231: OID.NUMERIC,
  1182: OID.DATE,
  1187: OID.INTERVAL,
};
