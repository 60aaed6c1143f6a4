'use client';
import { useState, useTransition } from 'react';
import { changeRoleAction, endUserSessionsAction, setDisabledAction } from '@/app/(console)/admin/users/actions';
import { Button } from '@/components/ui/button';
import { Select } from '@/components/ui/field';
import { roleLabel, roles, type Role } from '@/lib/auth/permissions';
import { actionError } from '@/lib/action-state';

export function UserRowActions({
  userId,
  email,
  role,
  disabled,
  self,
}: {
  userId: string;
  email: string;
  role: Role;
  disabled: boolean;
  self: boolean;
}) {
  const [pending, start] = useTransition();
  const [error, setError] = useState<string | null>(null);
  if (self) return <span className="text-xs text-slate-500">You</span>;
  return (
    <div className="flex flex-wrap items-center justify-end gap-2">
      <label className="sr-only" htmlFor={`role-${userId}`}>
        Role of {email}
      </label>
      <Select
        id={`role-${userId}`}
        className="w-32 py-1"
        defaultValue={role}
        disabled={pending}
        onChange={(e) => start(async () => setError(actionError(await changeRoleAction(userId, e.target.value))))}
      >
        {roles.map((r) => (
          <option key={r} value={r}>
            {roleLabel[r]}
          </option>
        ))}
      </Select>
      <Button
        size="sm"
        className="whitespace-nowrap"
        variant={disabled ? 'secondary' : 'danger'}
        disabled={pending}
        onClick={() => {
          if (!disabled && !window.confirm(`Disable ${email}? They are signed out and their tokens stop working.`))
            return;
          start(async () => setError(actionError(await setDisabledAction(userId, !disabled))));
        }}
      >
        {disabled ? 'Enable' : 'Disable'}
      </Button>
      <Button
        size="sm"
        className="whitespace-nowrap"
        variant="secondary"
        disabled={pending || disabled}
        onClick={() => {
          if (!window.confirm(`End every session of ${email}? They must sign in again.`)) return;
          start(async () => setError(actionError(await endUserSessionsAction(userId))));
        }}
      >
        End sessions
      </Button>
      {error ? <span className="text-xs text-rose-600">{error}</span> : null}
    </div>
  );
}
