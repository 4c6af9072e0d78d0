/** Identifier quoting for names we validated already; doubling quotes keeps even a bad name inert. */
export const quoteIdent = (name: string): string => '"' + name.replace(/"/g, '""') + '"';

/** Literal quoting for DDL (CHECK lists, defaults), where parameters are not allowed. */
export const quoteLiteral = (value: string): string => "'" + value.replace(/'/g, "''") + "'";
