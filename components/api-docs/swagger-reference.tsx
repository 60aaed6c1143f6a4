'use client';
import Script from 'next/script';
import { useRef, useState } from 'react';
import './swagger-theme.css';

type SwaggerUIBundle = (options: Record<string, unknown>) => unknown;
declare global {
  interface Window {
    SwaggerUIBundle?: SwaggerUIBundle;
  }
}

/**
 * The OpenAPI document rendered by swagger-ui, its bundle served by the console (app/api-docs/assets)
 * and loaded with this request's CSP nonce. Read only: no "Try it out", since a request sent from
 * here would carry the viewer's session and change real records; and no call to swagger's online
 * validator (validatorUrl 'none'), nor to anything but this origin.
 */
export function SwaggerReference({
  bundleUrl,
  specUrl,
  nonce,
}: {
  bundleUrl: string;
  specUrl: string;
  nonce?: string;
}) {
  const host = useRef<HTMLDivElement>(null);
  const [state, setState] = useState<'loading' | 'ready' | 'failed'>('loading');

  const render = () => {
    const SwaggerUIBundle = window.SwaggerUIBundle;
    if (!host.current || !SwaggerUIBundle) return setState('failed');
    SwaggerUIBundle({
      url: specUrl,
      domNode: host.current,
      validatorUrl: 'none',
      tryItOutEnabled: false,
      supportedSubmitMethods: [],
      // No deep links: swagger puts them as links inside each operation's toggle button (nested controls).
      deepLinking: false,
      docExpansion: 'list',
      defaultModelsExpandDepth: -1,
      displayOperationId: false,
      onComplete: () => {
        // swagger's server picker has no accessible name of its own.
        host.current?.querySelector('select#servers')?.setAttribute('aria-label', 'Server');
        setState('ready');
      },
    });
  };

  return (
    <>
      <Script
        src={bundleUrl}
        nonce={nonce}
        strategy="afterInteractive"
        onReady={render}
        onError={() => setState('failed')}
      />
      {state === 'loading' ? <p className="text-sm text-slate-500">Loading the reference…</p> : null}
      {state === 'failed' ? (
        <p role="alert" className="text-sm text-red-700">
          The reference could not be rendered. The document itself is at{' '}
          <a className="underline" href={specUrl}>
            {specUrl}
          </a>
          .
        </p>
      ) : null}
      <div ref={host} className="api-reference rounded-lg bg-white shadow-xs ring-1 ring-slate-200" />
    </>
  );
}
