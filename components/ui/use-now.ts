'use client';
import { useEffect, useState } from 'react';

/** The current time, refreshed every `intervalMs`: for relative times that must not go stale. */
export function useNow(intervalMs = 30_000, initial?: number): number {
  const [now, setNow] = useState(() => initial ?? Date.now());
  useEffect(() => {
    const id = setInterval(() => setNow(Date.now()), intervalMs);
    return () => clearInterval(id);
  }, [intervalMs]);
  return now;
}
