// A short, human name for a browser from its User-Agent ("Chrome on Linux"). Pure.
const browsers: [RegExp, string][] = [
  [/Edg(e|A|iOS)?\//, 'Edge'],
  [/OPR\/|Opera/, 'Opera'],
  [/Firefox\/|FxiOS/, 'Firefox'],
  [/HeadlessChrome/, 'Headless Chrome'],
  [/Chrome\/|CriOS|Chromium/, 'Chrome'],
  [/Safari\//, 'Safari'],
  [/curl\//, 'curl'],
];
const systems: [RegExp, string][] = [
  [/Windows/, 'Windows'],
  [/iPhone|iPad|iOS/, 'iOS'],
  [/Android/, 'Android'],
  [/Mac OS X|Macintosh/, 'macOS'],
  [/CrOS/, 'ChromeOS'],
  [/Linux/, 'Linux'],
];

export function deviceFromUserAgent(ua: string | null | undefined): string {
  const text = (ua ?? '').slice(0, 512);
  if (!text.trim()) return 'Unknown device';
  const browser = browsers.find(([re]) => re.test(text))?.[1] ?? 'Unknown browser';
  const system = systems.find(([re]) => re.test(text))?.[1];
  return system ? `${browser} on ${system}` : browser;
}
