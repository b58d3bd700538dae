// Chart.js, registered with only what the pages draw, and three small plugins it lacks:
// whiskers (min–max spread over bars or points), the margin band (around a ratio of 1, behind
// intervals drawn as floating bars) and vertical markers (percentiles on the latency histogram).

import {
  Chart,
  BarController,
  BarElement,
  LineController,
  LineElement,
  PointElement,
  CategoryScale,
  LinearScale,
  LogarithmicScale,
  Tooltip,
  Legend,
  Filler,
} from 'chart.js';

Chart.register(
  BarController,
  BarElement,
  LineController,
  LineElement,
  PointElement,
  CategoryScale,
  LinearScale,
  LogarithmicScale,
  Tooltip,
  Legend,
  Filler,
);

// Okabe–Ito: told apart by people with any common colour-vision deficiency.
export const PALETTE = [
  '#0072B2',
  '#E69F00',
  '#009E73',
  '#CC79A7',
  '#56B4E9',
  '#D55E00',
  '#F0E442',
  '#000000',
];
export const colourOf = (i) => PALETTE[i % PALETTE.length];

export const ink = () =>
  getComputedStyle(document.documentElement).getPropertyValue('--ink').trim() || '#1d2329';
const muted = () =>
  getComputedStyle(document.documentElement).getPropertyValue('--muted').trim() || '#5b6670';
const grid = () =>
  getComputedStyle(document.documentElement).getPropertyValue('--grid').trim() || '#e3e7eb';

// dataset.whiskers[i] = {min, max}: a vertical line with caps through bar/point i.
const whiskerPlugin = {
  id: 'whiskers',
  afterDatasetsDraw(chart) {
    const { ctx } = chart;
    const y = chart.scales.y;
    chart.data.datasets.forEach((ds, di) => {
      if (!ds.whiskers || !chart.isDatasetVisible(di)) return;
      const meta = chart.getDatasetMeta(di);
      meta.data.forEach((el, i) => {
        const w = ds.whiskers[i];
        if (!w || el.skip) return;
        const top = y.getPixelForValue(w.max);
        const bottom = y.getPixelForValue(w.min);
        const half = Math.max(3, Math.min(8, (el.width ?? 12) / 4));
        ctx.save();
        ctx.strokeStyle = ink();
        ctx.lineWidth = 1.5;
        ctx.beginPath();
        ctx.moveTo(el.x, top);
        ctx.lineTo(el.x, bottom);
        ctx.moveTo(el.x - half, top);
        ctx.lineTo(el.x + half, top);
        ctx.moveTo(el.x - half, bottom);
        ctx.lineTo(el.x + half, bottom);
        ctx.stroke();
        ctx.restore();
      });
    });
  },
};

// options.plugins.margin = {low, high, at, label} on the x scale: the margin band [low, high]
// shaded across the chart's height, labelled at its top, and a dashed line at `at` (a ratio of
// 1): the backdrop of a forest plot of intervals.
const marginPlugin = {
  id: 'margin',
  beforeDatasetsDraw(chart, _args, opts) {
    if (!opts || !Number.isFinite(opts.low) || !Number.isFinite(opts.high)) return;
    const { ctx, chartArea } = chart;
    const x = chart.scales.x;
    const clamp = (px) => Math.min(chartArea.right, Math.max(chartArea.left, px));
    const left = clamp(x.getPixelForValue(opts.low));
    const right = clamp(x.getPixelForValue(opts.high));
    ctx.save();
    ctx.fillStyle = 'rgba(120, 130, 140, 0.2)';
    ctx.fillRect(left, chartArea.top, right - left, chartArea.bottom - chartArea.top);
    const line = x.getPixelForValue(opts.at ?? 1);
    ctx.strokeStyle = ink();
    ctx.setLineDash([4, 3]);
    ctx.lineWidth = 1;
    ctx.beginPath();
    ctx.moveTo(line, chartArea.top);
    ctx.lineTo(line, chartArea.bottom);
    ctx.stroke();
    if (opts.label) {
      ctx.font = '11px system-ui, sans-serif';
      ctx.fillStyle = muted();
      ctx.textAlign = 'center';
      ctx.textBaseline = 'bottom';
      ctx.fillText(opts.label, (left + right) / 2, chartArea.top - 2);
    }
    ctx.restore();
  },
};

// options.plugins.markers = {list: [{value, label, colour, dash, width}]} on the x scale: vertical
// lines, labelled; dashed in the ink's colour unless a marker says otherwise (dash [] is solid).
const markerPlugin = {
  id: 'markers',
  afterDatasetsDraw(chart, _args, opts) {
    const list = opts?.list;
    if (!list || !list.length) return;
    const { ctx, chartArea } = chart;
    const x = chart.scales.x;
    ctx.save();
    ctx.font = '11px system-ui, sans-serif';
    list.forEach((m, i) => {
      const px = x.getPixelForValue(m.value);
      if (!(px >= chartArea.left && px <= chartArea.right)) return;
      ctx.fillStyle = m.colour ?? ink();
      ctx.strokeStyle = m.colour ?? ink();
      ctx.lineWidth = m.width ?? 1;
      ctx.setLineDash(m.dash ?? [3, 3]);
      ctx.beginPath();
      ctx.moveTo(px, chartArea.top);
      ctx.lineTo(px, chartArea.bottom);
      ctx.stroke();
      const width = ctx.measureText(m.label).width;
      const left = px + 3 + width > chartArea.right ? px - 3 - width : px + 3; // keep it inside
      ctx.fillText(m.label, left, chartArea.top + 10 + (i % 3) * 12);
    });
    ctx.restore();
  },
};

Chart.register(whiskerPlugin, marginPlugin, markerPlugin);

export function applyTheme() {
  Chart.defaults.font.family = getComputedStyle(document.body).fontFamily;
  Chart.defaults.font.size = 12;
  Chart.defaults.color = muted();
  Chart.defaults.borderColor = grid();
  Chart.defaults.animation = false; // redraws on every poll: no motion, and stable screenshots
  Chart.defaults.maintainAspectRatio = false;
  Chart.defaults.plugins.legend.labels.boxWidth = 12;
}

// The charts of the page on screen, destroyed when it goes away or redraws.
export class ChartSet {
  constructor() {
    this.charts = [];
  }
  add(canvas, config) {
    const chart = new Chart(canvas, config);
    this.charts.push(chart);
    return chart;
  }
  destroy() {
    for (const c of this.charts) c.destroy();
    this.charts = [];
  }
}

// A canvas in a sized box with an accessible name; Chart.js fills the box.
export function chartBox(id, label, height = 260) {
  const canvas = document.createElement('canvas');
  canvas.setAttribute('role', 'img');
  canvas.setAttribute('aria-label', label);
  canvas.id = id;
  const box = document.createElement('div');
  box.className = 'chart-box';
  box.style.height = `${height}px`;
  box.appendChild(canvas);
  return { box, canvas };
}

// A legend below the chart, with each dataset's point style, listing only the datasets marked
// `legendEntry` (bands and guide lines stay out of it).
export const legendBelow = () => ({
  display: true,
  position: 'bottom',
  labels: {
    usePointStyle: true,
    filter: (item, data) => data.datasets[item.datasetIndex].legendEntry,
  },
});
