// A time-series chart of the overview (uPlot: small, fast, canvas). Redrawn in place when the data
// changes; the numbers it shows are also in the page as text for those who cannot see it.

import { useEffect, useRef } from 'preact/hooks';
import uPlot from 'uplot';

export interface Series {
  label: string;
  values: number[];
  color: string;
}

export function Chart({ title, times, series }: { title: string; times: number[]; series: Series[] }) {
  const box = useRef<HTMLDivElement>(null);
  const plot = useRef<uPlot | null>(null);
  const data: uPlot.AlignedData = [times, ...series.map((s) => s.values)];
  useEffect(() => {
    const el = box.current;
    if (el === null) return;
    plot.current = new uPlot(
      {
        title,
        width: Math.max(280, el.clientWidth),
        height: 180,
        series: [{}, ...series.map((s) => ({ label: s.label, stroke: s.color, width: 2 }))],
        axes: [{ stroke: 'currentColor' }, { stroke: 'currentColor' }],
        hooks: { setLegend: [showLatest] },
      },
      data,
      el,
    );
    const resize = new ResizeObserver(() => plot.current?.setSize({ width: Math.max(280, el.clientWidth), height: 180 }));
    resize.observe(el);
    return () => {
      resize.disconnect();
      plot.current?.destroy();
      plot.current = null;
    };
    // Built once; the effect below feeds it new data.
  }, []);
  useEffect(() => {
    plot.current?.setData(data);
    if (plot.current) showLatest(plot.current);
  }, [times, series]);
  return <div class="chart" ref={box} role="img" aria-label={`${title}: chart of the last minutes`} />;
}

/**
 * uPlot's legend says "--" for every series while the pointer is off the chart, which read as "no
 * data": off the chart it shows the latest sample, and the hovered one on it.
 */
function showLatest(u: uPlot): void {
  const last = u.data[0].length - 1;
  if (u.cursor.idx == null && last >= 0) u.setLegend({ idx: last }, false);
}
