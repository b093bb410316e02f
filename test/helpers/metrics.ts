// Reads a relay's /metrics (Prometheus text) into name{labels} -> value, without the node label
// every series carries.
export async function readMetrics(baseUrl: string): Promise<Map<string, number>> {
  const res = await fetch(new URL('/metrics', baseUrl));
  return parseMetrics(await res.text());
}

/** Prometheus text as read by readMetrics. */
export function parseMetrics(text: string): Map<string, number> {
  const out = new Map<string, number>();
  for (const line of text.split('\n')) {
    if (line.startsWith('#') || line.trim() === '') continue;
    const i = line.lastIndexOf(' ');
    const [, name, labels = ''] = /^([^{]+)(?:\{(.*)\})?$/.exec(line.slice(0, i))!;
    const kept = labels.split(',').filter((l) => l !== '' && !l.startsWith('node='));
    out.set(kept.length === 0 ? name! : `${name!}{${kept.join(',')}}`, Number(line.slice(i + 1)));
  }
  return out;
}
