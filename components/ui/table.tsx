import Link from 'next/link';
import { Children, cloneElement, isValidElement, type ReactElement, type ReactNode } from 'react';
import { cn } from './cn';
import { sortParam, type Sort, type SortDir } from '@/lib/sort';

/** A column heading: plain text, or text that sorts the list when followed. */
export type Column =
  | string
  | {
      label: string;
      /** Named for screen readers only (an actions column); no label in the phone cards. */
      hidden?: boolean;
      /** Left out below 1440 px wide to keep the row on screen; still shown in the phone cards. Pass the same to the cells. */
      wide?: boolean;
      sort?: { href: string; dir: 'asc' | 'desc' | null };
    };

/** The class a `wide` column's cells take. */
export const wideOnly = 'max-[90rem]:hidden';

const labelOf = (c: Column) => (typeof c === 'string' ? c : c.hidden ? '' : c.label);

type CellProps = { label?: string; children?: ReactNode };

/**
 * Gives each cell its column's name, so below md a row reads as a card ("Tool  read_file") without
 * every page repeating its headings. Rows are direct `<tr>` children; cells are `Td`s.
 */
function labelCells(rows: ReactNode, labels: string[]): ReactNode {
  return Children.map(rows, (row) => {
    if (!isValidElement<{ children?: ReactNode }>(row) || row.type !== 'tr') return row;
    let i = 0;
    const cells = Children.map(row.props.children, (cell) => {
      if (!isValidElement(cell)) return cell;
      const label = labels[i++];
      return cell.type === Td ? cloneElement(cell as ReactElement<CellProps>, { label }) : cell;
    });
    return cloneElement(row, {}, cells);
  });
}

function Heading({ column }: { column: Column }) {
  if (typeof column === 'string') return <>{column}</>;
  if (column.hidden) return <span className="sr-only">{column.label}</span>;
  if (!column.sort) return <>{column.label}</>;
  const { href, dir } = column.sort;
  return (
    <Link
      href={href}
      className="group inline-flex items-center gap-1 rounded hover:text-slate-900"
      data-testid={`sort-${column.label}`}
    >
      {column.label}
      <span aria-hidden className={dir ? 'text-slate-700' : 'text-slate-300 group-hover:text-slate-500'}>
        {dir === 'asc' ? '▲' : dir === 'desc' ? '▼' : '↕'}
      </span>
      <span className="sr-only">
        {dir === 'asc' ? ', sorted ascending' : dir === 'desc' ? ', sorted descending' : ', sort'}
      </span>
    </Link>
  );
}

/**
 * A dense table (rows about 40 px) from md up; below md each row is a card of labelled fields,
 * so a phone never scrolls sideways. `cards={false}` keeps the table (it scrolls inside its box).
 */
export function Table({
  head,
  children,
  caption,
  cards = true,
}: {
  head: Column[];
  children: ReactNode;
  caption?: string;
  cards?: boolean;
}) {
  const labels = head.map(labelOf);
  return (
    <div className="relative overflow-x-auto rounded-lg bg-white shadow-xs ring-1 ring-slate-200">
      <table className={cn('min-w-full divide-y divide-slate-200 text-sm', cards && 'card-rows')}>
        {caption ? <caption className="sr-only">{caption}</caption> : null}
        <thead className={cn('bg-slate-50', cards && 'max-md:sr-only')}>
          <tr>
            {head.map((h, i) => {
              const dir = typeof h === 'object' && h.sort ? h.sort.dir : null;
              return (
                <th
                  key={i}
                  scope="col"
                  aria-sort={dir === 'asc' ? 'ascending' : dir === 'desc' ? 'descending' : undefined}
                  className={cn(
                    'whitespace-nowrap px-3 py-2 text-left text-xs font-semibold text-slate-600',
                    typeof h === 'object' && h.wide && wideOnly,
                  )}
                >
                  <Heading column={h} />
                </th>
              );
            })}
          </tr>
        </thead>
        <tbody className="divide-y divide-slate-100">{cards ? labelCells(children, labels) : children}</tbody>
      </table>
    </div>
  );
}

/** A table cell; in card layout (below md) a line "label  value". */
export function Td({ children, className, label }: { children?: ReactNode; className?: string; label?: string }) {
  return (
    <td
      data-label={label || undefined}
      className={cn('whitespace-nowrap px-3 py-1.5 align-middle text-slate-700', className)}
    >
      {children}
    </td>
  );
}

/**
 * A heading that sorts a list the server reads whole (`?sort=key`, `?sort=-key`): followed once it
 * sorts by this column (dates newest first), again it reverses.
 */
export function sortColumn<K extends string>(
  label: string,
  key: K,
  current: Sort<K> | null,
  href: (sort: string) => string,
  firstDir: SortDir = 'asc',
): Exclude<Column, string> {
  const dir = current?.key === key ? current.dir : null;
  const next: SortDir = dir ? (dir === 'asc' ? 'desc' : 'asc') : firstDir;
  return { label, sort: { href: href(sortParam({ key, dir: next })), dir } };
}
