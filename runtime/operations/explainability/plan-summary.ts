/**
 * Describes a PostgreSQL `EXPLAIN (FORMAT JSON)` plan in words, without SQL
 * text: node types, the entity each scan reads, index names and estimated
 * rows. Conditions and filters are only named as present, never shown (they
 * carry column expressions and, on a custom plan, the caller's values).
 */

interface PlanNode {
  'Node Type': string;
  'Relation Name'?: string;
  'Index Name'?: string;
  'Index Cond'?: string;
  'Recheck Cond'?: string;
  Filter?: string;
  'Plan Rows'?: number;
  'Total Cost'?: number;
  'Scan Direction'?: string;
  Plans?: PlanNode[];
}

export interface PlanStep {
  step: string;
  entity: string | null;
  index: string | null;
  /** `condition`: the index narrows the rows; `order`: it only supplies the order (rows are filtered after). */
  indexUse: 'condition' | 'order' | null;
  /** Rows are checked against a condition after they are read. */
  filtered: boolean;
  estimatedRows: number;
  depth: number;
}

export interface PlanSummary {
  plan: string;
  steps: PlanStep[];
  usesIndex: boolean;
  indexes: string[];
  estimatedRows: number;
  estimatedCost: number;
}

const INDEX_SCANS = new Set(['Index Scan', 'Index Only Scan', 'Bitmap Index Scan']);

/** The root plan node of an EXPLAIN (FORMAT JSON) result row, whichever way the driver decoded the json column. */
export function rootPlanOf(value: unknown): PlanNode {
  const parsed = typeof value === 'string' ? JSON.parse(value) as unknown : value;
  const first = Array.isArray(parsed) ? parsed[0] as { Plan?: PlanNode } | undefined : undefined;
  if (first?.Plan === undefined) throw new Error('EXPLAIN returned no plan');
  return first.Plan;
}

function sentence(s: PlanStep): string {
  const on = s.entity === null ? '' : ` on ${s.entity}`;
  const idx = s.index === null ? '' : ` using index ${s.index}${s.indexUse === 'order' ? ' for order' : ' for its condition'}`;
  const filter = s.filtered ? ', rows filtered after reading' : '';
  return `${s.step}${on}${idx}${filter} (estimated ${s.estimatedRows} row${s.estimatedRows === 1 ? '' : 's'})`;
}

/** `tables` maps a table name (as EXPLAIN reports it) to its entity name. */
export function summarizePlan(root: PlanNode, tables: ReadonlyMap<string, string>): PlanSummary {
  const steps: PlanStep[] = [];
  const walk = (n: PlanNode, depth: number): void => {
    const index = n['Index Name'] ?? null;
    const hasCond = n['Index Cond'] !== undefined || n['Node Type'] === 'Bitmap Index Scan';
    const rel = n['Relation Name'];
    steps.push({
      step: n['Node Type'],
      entity: rel === undefined ? null : tables.get(rel) ?? rel,
      index,
      indexUse: index === null ? null : hasCond ? 'condition' : 'order',
      filtered: n.Filter !== undefined || n['Recheck Cond'] !== undefined,
      estimatedRows: n['Plan Rows'] ?? 0,
      depth,
    });
    for (const c of n.Plans ?? []) walk(c, depth + 1);
  };
  walk(root, 0);
  // Read bottom-up: the innermost step runs first.
  const plan = [...steps].sort((a, b) => b.depth - a.depth).map(sentence).join(', then ');
  return {
    plan,
    steps,
    usesIndex: steps.some((s) => INDEX_SCANS.has(s.step) && s.indexUse === 'condition'),
    indexes: [...new Set(steps.map((s) => s.index).filter((i): i is string => i !== null))],
    estimatedRows: root['Plan Rows'] ?? 0,
    estimatedCost: root['Total Cost'] ?? 0,
  };
}
