// Chart.js, registered with only what the pages draw, and three small plugins it lacks:
// whiskers (min–max spread over bars or points), horizontal bands (the noise floor around a
// ratio of 1) and vertical markers (percentiles on the latency histogram).

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

const ink = () =>
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

// options.plugins.bands = {values: [fraction|null per category], around: 1, label}: a shaded
// band [around − f, around + f] across each category, and a line at `around`.
const bandPlugin = {
  id: 'bands',
  beforeDatasetsDraw(chart, _args, opts) {
    if (!opts || !opts.values) return;
    const { ctx, chartArea } = chart;
    const x = chart.scales.x;
    const y = chart.scales.y;
    const around = opts.around ?? 1;
    const n = chart.data.labels.length;
    ctx.save();
    opts.values.forEach((f, i) => {
      if (f === null || f === undefined || !Number.isFinite(f)) return;
      const center = x.getPixelForValue(i);
      const width = n > 0 ? (chartArea.right - chartArea.left) / n : 0;
      const pixel = (v) => {
        const px = y.getPixelForValue(v);
        return Number.isFinite(px) ? px : chartArea.bottom; // below 0 on a log axis
      };
      const top = Math.max(chartArea.top, pixel(around + f));
      const bottom = Math.min(
        chartArea.bottom,
        around - f > 0 ? pixel(around - f) : chartArea.bottom,
      );
      ctx.fillStyle = 'rgba(120, 130, 140, 0.18)';
      ctx.fillRect(center - width / 2, top, width, bottom - top);
    });
    const line = y.getPixelForValue(around);
    ctx.strokeStyle = ink();
    ctx.setLineDash([4, 3]);
    ctx.lineWidth = 1;
    ctx.beginPath();
    ctx.moveTo(chartArea.left, line);
    ctx.lineTo(chartArea.right, line);
    ctx.stroke();
    ctx.restore();
  },
};

// options.plugins.markers = [{value, label}] on the x scale: dashed vertical lines, labelled.
const markerPlugin = {
  id: 'markers',
  afterDatasetsDraw(chart, _args, opts) {
    const list = opts?.list;
    if (!list || !list.length) return;
    const { ctx, chartArea } = chart;
    const x = chart.scales.x;
    ctx.save();
    ctx.font = '11px system-ui, sans-serif';
    ctx.fillStyle = ink();
    ctx.strokeStyle = ink();
    ctx.setLineDash([3, 3]);
    list.forEach((m, i) => {
      const px = x.getPixelForValue(m.value);
      if (!(px >= chartArea.left && px <= chartArea.right)) return;
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

Chart.register(whiskerPlugin, bandPlugin, markerPlugin);

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
