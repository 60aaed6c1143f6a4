// Server-sent events (the WHATWG event-stream format) as the gateway reads them from the server
// (http-upstream.ts): lines split on \n, \r\n or \r, fields gathered into events, comments skipped.

export interface EventStreamHandlers {
  /** The data of a `message` event (or one with no event name), its lines joined by \n; never empty. */
  message(data: string): void;
  /** An `id` field (one with NUL is ignored): the last event id, to resume from. */
  id(value: string): void;
  /** A `retry` field of digits only: the reconnection delay the server asks for, in ms. */
  retry(ms: number): void;
}

/** A reader of one stream: give it each decoded chunk as it arrives; a line split across chunks waits for its end. */
export function eventStreamReader(on: EventStreamHandlers): (chunk: string) => void {
  let buffer = '';
  let data: string[] = [];
  let event = '';
  const dispatch = () => {
    const text = data.join('\n');
    const kind = event;
    data = [];
    event = '';
    if (!text || (kind && kind !== 'message')) return;
    on.message(text);
  };
  const line = (l: string) => {
    if (l === '') return dispatch();
    if (l.startsWith(':')) return;
    const colon = l.indexOf(':');
    const field = colon < 0 ? l : l.slice(0, colon);
    let value = colon < 0 ? '' : l.slice(colon + 1);
    if (value.startsWith(' ')) value = value.slice(1);
    if (field === 'data') data.push(value);
    else if (field === 'event') event = value;
    else if (field === 'id' && !value.includes('\u0000')) on.id(value);
    else if (field === 'retry' && /^\d+$/.test(value)) on.retry(Number(value));
  };
  return (chunk: string) => {
    buffer += chunk;
    let start = 0;
    if (buffer.indexOf('\r') < 0) {
      // Lines ending in \n only (what servers send): found by indexOf, not character by character.
      for (let i = buffer.indexOf('\n'); i >= 0; i = buffer.indexOf('\n', start)) {
        line(buffer.slice(start, i));
        start = i + 1;
      }
    } else {
      for (let i = 0; i < buffer.length; i++) {
        const c = buffer.charCodeAt(i);
        if (c !== 10 && c !== 13) continue;
        if (c === 13 && i + 1 === buffer.length) break; // a \r\n split across chunks
        line(buffer.slice(start, i));
        if (c === 13 && buffer.charCodeAt(i + 1) === 10) i++;
        start = i + 1;
      }
    }
    buffer = start ? buffer.slice(start) : buffer;
  };
}
