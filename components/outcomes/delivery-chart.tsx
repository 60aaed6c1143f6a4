'use client';
import { Area, AreaChart, CartesianGrid, Legend, ResponsiveContainer, Tooltip, XAxis, YAxis } from 'recharts';
import { deliveryLabel } from '@/lib/outcomes/present';
import type { Delivery } from '@/lib/outcomes/schemas';

const colors: Record<Delivery, string> = {
  completed: '#10b981',
  rejected: '#f59e0b',
  never_sent: '#94a3b8',
  unknown: '#e11d48',
};
const order: Delivery[] = ['completed', 'rejected', 'never_sent', 'unknown'];

const tick = (iso: string) =>
  new Date(iso).toLocaleString('en-GB', { weekday: 'short', hour: '2-digit', timeZone: 'UTC' });

export function DeliveryChart({ series }: { series: ({ bucket: string } & Record<Delivery, number>)[] }) {
  return (
    <div
      className="h-64 w-full"
      role="img"
      aria-label="Outcome records per six hours over the last seven days, by delivery state"
    >
      <ResponsiveContainer width="100%" height="100%">
        <AreaChart data={series} margin={{ top: 8, right: 8, bottom: 0, left: -16 }}>
          <CartesianGrid strokeDasharray="3 3" stroke="#e2e8f0" vertical={false} />
          <XAxis dataKey="bucket" tickFormatter={tick} tick={{ fontSize: 11, fill: '#64748b' }} minTickGap={40} />
          <YAxis allowDecimals={false} tick={{ fontSize: 11, fill: '#64748b' }} />
          <Tooltip labelFormatter={(l) => `${tick(String(l))}:00 UTC`} />
          <Legend wrapperStyle={{ fontSize: 12 }} />
          {order.map((d) => (
            <Area
              key={d}
              type="monotone"
              dataKey={d}
              name={deliveryLabel[d]}
              stackId="1"
              stroke={colors[d]}
              fill={colors[d]}
              fillOpacity={0.35}
              isAnimationActive={false}
            />
          ))}
        </AreaChart>
      </ResponsiveContainer>
    </div>
  );
}
