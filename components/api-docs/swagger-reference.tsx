'use client';
import Script from 'next/script';
import { useEffect, useRef, useState } from 'react';
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

  // swagger's server picker has no accessible name of its own, and swagger may render or replace it
  // at any time (before onComplete too): name it in the same task it appears, so no check sees it bare.
  useEffect(() => {
    const node = host.current;
    if (!node) return;
    const name = () => {
      for (const select of node.querySelectorAll('select#servers:not([aria-label])')) {
        select.setAttribute('aria-label', 'Server');
      }
    };
    const observer = new MutationObserver(name);
    observer.observe(node, { childList: true, subtree: true });
    return () => observer.disconnect();
  }, []);

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
      onComplete: () => setState('ready'),
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
      <div
        ref={host}
        data-state={state}
        data-testid="api-reference"
        className="api-reference rounded-lg bg-white shadow-xs ring-1 ring-slate-200"
      />
    </>
  );
}
