'use client';
import { useId, useState, useTransition } from 'react';
import { setRequirementAction } from '@/app/(console)/admin/tools/actions';
import { Button } from '@/components/ui/button';
import { Select } from '@/components/ui/field';
import { actionError } from '@/lib/action-state';

export type Requirement = 'default' | '0' | '1' | '2' | 'blocked';

/** An admin's choice of approvals for a tool (or, with `tool` null, a whole server): a policy rule, or none. */
export function RequirementSelect({
  server,
  tool,
  current,
  label,
  defaultLabel,
}: {
  server: string;
  tool: string | null;
  current: Requirement;
  label: string;
  defaultLabel: string;
}) {
  const id = useId();
  const [value, setValue] = useState<Requirement>(current);
  const [pending, start] = useTransition();
  const [error, setError] = useState<string | null>(null);
  return (
    <div className="flex flex-wrap items-center gap-2">
      <label className="sr-only" htmlFor={id}>
        {label}
      </label>
      <div className="w-44">
        <Select
          id={id}
          className="py-1 text-xs"
          value={value}
          disabled={pending}
          onChange={(e) => setValue(e.target.value as Requirement)}
        >
          <option value="default">{defaultLabel}</option>
          <option value="0">Rule: none</option>
          <option value="1">Rule: 1 approval</option>
          <option value="2">Rule: 2 approvals</option>
          <option value="blocked">Rule: blocked (not exposed)</option>
        </Select>
      </div>
      <Button
        size="sm"
        variant="secondary"
        disabled={pending || value === current}
        aria-label={`Apply: ${label}`}
        onClick={() => start(async () => setError(actionError(await setRequirementAction(server, tool, value), '')))}
      >
        {pending ? 'Saving…' : 'Apply'}
      </Button>
      {error ? <span className="text-xs text-rose-600">{error}</span> : null}
    </div>
  );
}
