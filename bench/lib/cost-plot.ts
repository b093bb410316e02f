// The scale scenario's cost curves as a PNG: an SVG drawn here (two panels, streams on a log axis)
// and photographed by Debian's Chromium through playwright-core, the browser the console's tests use.
// Without Chromium the tables stand alone and no picture is written.

import { existsSync, mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { chromium } from 'playwright-core';

export interface CurvePoint {
  streams: number;
  rssKiB: number;
  heapKiB: number;
  delivery: { gatewayUs: number; relayUs: number };
}

const RESULTS = join(process.cwd(), 'bench', 'results');
const W = 460;
const H = 300;
const PAD = { left: 56, right: 40, top: 36, bottom: 44 };

interface Line {
  label: string;
  color: string;
  values: number[];
}

function panel(title: string, unit: string, xs: number[], lines: Line[], offsetX: number): string {
  const max = Math.max(...lines.flatMap((l) => l.values)) * 1.15 || 1;
  const [lo, hi] = [Math.log10(Math.min(...xs)), Math.log10(Math.max(...xs))];
  const x = (v: number): number => offsetX + PAD.left + ((Math.log10(v) - lo) / (hi - lo || 1)) * (W - PAD.left - PAD.right);
  const y = (v: number): number => PAD.top + (1 - v / max) * (H - PAD.top - PAD.bottom);
  const ticks = [0, 0.25, 0.5, 0.75, 1].map((f) => f * max);
  const parts = [
    `<text x="${offsetX + W / 2}" y="20" text-anchor="middle" font-weight="bold">${title}</text>`,
    ...ticks.map((t) => `<line x1="${offsetX + PAD.left}" x2="${offsetX + W - PAD.right}" y1="${y(t)}" y2="${y(t)}" stroke="#ddd"/><text x="${offsetX + PAD.left - 6}" y="${y(t) + 4}" text-anchor="end">${t.toFixed(t < 10 ? 1 : 0)}</text>`),
    ...xs.map((v) => `<text x="${x(v)}" y="${H - PAD.bottom + 18}" text-anchor="middle">${v.toLocaleString('en-US')}</text>`),
    `<text x="${offsetX + W / 2}" y="${H - 6}" text-anchor="middle">streams (log scale)</text>`,
    `<text x="${offsetX + 14}" y="${H / 2}" transform="rotate(-90 ${offsetX + 14} ${H / 2})" text-anchor="middle">${unit}</text>`,
  ];
  lines.forEach((l, i) => {
    parts.push(`<polyline fill="none" stroke="${l.color}" stroke-width="2.5" points="${xs.map((v, j) => `${x(v)},${y(l.values[j]!)}`).join(' ')}"/>`);
    for (const [j, v] of xs.entries()) parts.push(`<circle cx="${x(v)}" cy="${y(l.values[j]!)}" r="4" fill="${l.color}"/>`);
    parts.push(`<rect x="${offsetX + PAD.left + 10}" y="${PAD.top + 4 + i * 18}" width="12" height="12" fill="${l.color}"/><text x="${offsetX + PAD.left + 28}" y="${PAD.top + 15 + i * 18}">${l.label}</text>`);
  });
  return parts.join('');
}

/** Writes bench/results/<name>.png; returns its path, or null without Chromium. */
export async function writeCostPlot(points: CurvePoint[], name = 'scale-cost'): Promise<string | null> {
  const file = join(RESULTS, `${name}.png`);
  const executablePath = ['/usr/bin/chromium', '/usr/bin/chromium-browser'].find((p) => existsSync(p));
  if (executablePath === undefined || points.length < 2) return null;
  const xs = points.map((p) => p.streams);
  const svg =
    `<svg xmlns="http://www.w3.org/2000/svg" width="${2 * W}" height="${H}" font-family="sans-serif" font-size="12">` +
    `<rect width="100%" height="100%" fill="white"/>` +
    panel('CPU per delivery', 'microseconds', xs, [
      { label: 'gateways', color: '#2563eb', values: points.map((p) => p.delivery.gatewayUs) },
      { label: 'whole relay (+ ingress, NATS)', color: '#d97706', values: points.map((p) => p.delivery.relayUs) },
    ], 0) +
    panel('Memory per stream', 'KiB', xs, [
      { label: 'gateway RSS', color: '#16a34a', values: points.map((p) => p.rssKiB) },
      { label: 'gateway heap', color: '#9333ea', values: points.map((p) => p.heapKiB) },
    ], W) +
    `</svg>`;
  mkdirSync(RESULTS, { recursive: true });
  const browser = await chromium.launch({ executablePath, args: ['--no-sandbox', '--disable-gpu', '--disable-dev-shm-usage'] });
  try {
    const page = await browser.newPage({ viewport: { width: 2 * W, height: H } });
    await page.setContent(`<html><body style="margin:0">${svg}</body></html>`);
    await page.screenshot({ path: file });
  } finally {
    await browser.close();
  }
  return `bench/results/${name}.png`;
}
