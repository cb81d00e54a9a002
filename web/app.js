// Meridian's web page: the collector's answers (/api/..., web/web_server.h)
// as tables and ECharts charts. Routes (location.hash):
//   #/                       the jobs
//   #/job/NAME[/step/N]      a job's overview; the critical path of step N
//   #/compare?a=J&b=K        two jobs (or ?a=J&ranks=R1,R2: two ranks)
// Numbers come as protobuf's JSON writes them: 64-bit integers as strings.
'use strict';

const CLASS_COLORS = {
  TIME_CLASS_COMPUTE: '#2563eb',
  TIME_CLASS_COMMUNICATION: '#ea580c',
  TIME_CLASS_WAITING: '#9333ea',
  TIME_CLASS_SETUP: '#0d9488',
  TIME_CLASS_UNTRACED: '#9ca3af',
};
const LIVE_MS = 30000;   // a job whose last span is this recent is live
const POLL_MS = 2000;    // how often a live view asks again

let charts = [];   // disposed when the route changes
let config = {perfetto_ui: 'https://ui.perfetto.dev'};  // /api/config
let timers = [];

const num = (v) => (v === undefined || v === null ? 0 : Number(v));
const ms = (ns) => (num(ns) / 1e6).toFixed(3);
const size = (bytes) => (bytes < 1e3 ? `${bytes} B` : bytes < 1e6 ?
  `${(bytes / 1e3).toFixed(1)} KB` : bytes < 1e9 ? `${(bytes / 1e6).toFixed(1)} MB` :
  `${(bytes / 1e9).toFixed(2)} GB`);
const className = (c) =>
  (c || '').replace('TIME_CLASS_', '').toLowerCase().replace('setup', 'set-up');
const token = () => sessionStorage.getItem('meridian-token') || '';

function headers() {
  return token() ? {Authorization: 'Bearer ' + token()} : {};
}

async function api(path) {
  const response = await fetch(path, {headers: headers()});
  const body = await response.json().catch(() => ({error: response.statusText}));
  if (!response.ok) {
    const error = new Error(body.error || response.statusText);
    error.status = response.status;
    throw error;
  }
  return body;
}

function el(tag, attrs, ...children) {
  const node = document.createElement(tag);
  for (const [key, value] of Object.entries(attrs || {})) {
    if (key.startsWith('on')) node.addEventListener(key.slice(2), value);
    else if (value !== undefined && value !== null) node.setAttribute(key, value);
  }
  for (const child of children.flat()) {
    if (child === null || child === undefined) continue;
    node.append(child instanceof Node ? child : String(child));
  }
  return node;
}

// A table whose columns sort by a click on their header.
// columns: [{title, value(row), text(row)?, numeric?}]
function sortableTable(id, columns, rows, onClick) {
  let order = {column: -1, descending: false};
  const body = el('tbody');
  const render = () => {
    const sorted = rows.slice();
    if (order.column >= 0) {
      const c = columns[order.column];
      sorted.sort((a, b) => {
        const x = c.value(a), y = c.value(b);
        const d = x < y ? -1 : x > y ? 1 : 0;
        return order.descending ? -d : d;
      });
    }
    body.replaceChildren(...sorted.map((row) => {
      const tr = el('tr', onClick ? {class: 'clickable', onclick: () => onClick(row, tr)} : {},
        columns.map((c) => el('td', c.numeric ? {class: 'num'} : {},
          c.text ? c.text(row) : c.value(row))));
      tr.dataset.key = columns[0].value(row);
      return tr;
    }));
  };
  const head = el('tr', {}, columns.map((c, i) => el('th', {
    class: c.numeric ? 'num' : undefined,
    onclick: () => {
      order = {column: i, descending: order.column === i ? !order.descending : !!c.numeric};
      render();
    },
  }, c.title)));
  render();
  return el('table', {id}, el('thead', {}, head), body);
}

function chart(id, short) {
  const div = el('div', {id, class: short ? 'chart short' : 'chart'});
  return div;
}

function mount(div, option) {
  const c = echarts.init(div, null, {renderer: 'canvas'});
  c.setOption(option);
  charts.push(c);
  return c;
}

function reset() {
  for (const c of charts) c.dispose();
  charts = [];
  for (const t of timers) clearInterval(t);
  timers = [];
}

function setStatus(text, error) {
  const s = document.getElementById('status');
  s.textContent = text;
  s.className = error ? 'error' : '';
}

function showError(error) {
  const main = document.getElementById('main');
  const parts = [el('p', {class: 'error', id: 'error'}, error.message)];
  if (error.status === 401 || error.status === 403) {
    const input = el('input', {type: 'password', placeholder: 'token', id: 'token'});
    parts.push(el('p', {}, 'This collector wants a token: ', input, ' ',
      el('button', {onclick: () => {
        sessionStorage.setItem('meridian-token', input.value.trim());
        route();
      }}, 'Use it')));
  }
  main.replaceChildren(...parts);
}

// ---- the jobs ----

// Live: a process of it reports to an agent (health "running" or
// "stalled"), or its last span is recent.
function isLive(job) {
  return !!job.health ||
    (num(job.spans) > 0 && Date.now() - num(job.end_ns) / 1e6 < LIVE_MS);
}

const ranksText = (ranks) => (ranks.length === 1 ? `rank ${ranks[0]}` :
  `ranks ${ranks.join(', ')}`);
const seconds = (ns) => (num(ns) / 1e9).toFixed(1);

// One stall of /api/health, in words.
function stallText(s) {
  const waiting = ranksText(s.waiting_ranks || []);
  const suspects = ranksText(s.suspect_ranks || []);
  const at = s.kind === 'p2p' ? s.op : `${s.op} #${num(s.seq)}`;
  if (s.kind === 'missing') return `${waiting} wait in ${at}; ${suspects} never reached it.`;
  if (s.kind === 'mismatch') return `${waiting} wait in ${at}; ${suspects} called another operation there.`;
  return `${waiting} wait in ${at}; no peer posted a matching call (suspects: ${suspects}).`;
}

// The ranks slower than before (docs/health.md, "Slowdowns").
function slowdownsSection(health) {
  const slow = health.slowdowns || [];
  if (!slow.length) return '';
  return el('section', {id: 'slowdowns', class: 'slow-banner'},
    el('h2', {}, 'Slower than before'),
    sortableTable('slowdown-ranks', [
      {title: 'rank', numeric: true, value: (s) => s.rank},
      {title: 'node', value: (s) => s.node},
      {title: 'metric', value: (s) => s.metric},
      {title: 'peer', value: (s) => (s.peer === undefined || s.peer < 0 ? '' : String(s.peer))},
      {title: 'from step', numeric: true, value: (s) => num(s.from_step)},
      {title: 'ratio', numeric: true, value: (s) => s.ratio, text: (s) => `${s.ratio.toFixed(2)}x`},
      // A step's ms; a link's ms a MiB.
      {title: 'was (ms)', numeric: true, value: (s) => num(s.baseline_ns), text: (s) => ms(s.baseline_ns)},
      {title: 'now (ms)', numeric: true, value: (s) => num(s.now_ns), text: (s) => ms(s.now_ns)},
      {title: 'node counters that changed', value: (s) => counterChanges(s)},
    ], slow));
}

// A slowdown's node counters that changed with it: "name was -> now".
function counterChanges(slowdown) {
  const short = (v) => Number(v.toPrecision(3)).toLocaleString('en-US');
  return (slowdown.counters || [])
    .map((c) => `${c.name} ${short(c.baseline)} → ${short(c.now)}`)
    .join('; ');
}

// The steps where ranks became slower, on the step chart: a line at each
// slowdown's first step, naming the rank.
function markSlowdowns(stepChart, slowdowns) {
  stepChart.setOption({series: [{name: 'iteration', markLine: {
    symbol: 'none', silent: true, lineStyle: {color: '#b45309', type: 'dashed'},
    data: slowdowns.map((s) => ({xAxis: String(s.from_step),
      label: {formatter: s.metric === 'link' ?
        `link ${s.rank}-${s.peer} ${s.ratio.toFixed(2)}x` :
        `rank ${s.rank} ${s.metric} ${s.ratio.toFixed(2)}x`}})),
  }}]});
}

// A stalled job's diagnosis (docs/health.md), for the top of its page:
// what each stall is, and where each rank named in it is, with its stacks.
function healthBanner(health) {
  if (health.state !== 'stalled') return slowdownsSection(health);
  const stallRanks = (health.stalls || []).flatMap((s) => s.ranks || []);
  const stackOf = (r) => {
    const python = r.python_stack || [], native = r.stack || [];
    const frames = python.length && native.length ?
      [...python, '--- native ---', ...native] : [...python, ...native];
    if (!frames.length) return r.stack_error || '';
    // The innermost frame with a source line stands for the stack.
    const headline = frames.find((f) => /:\d+\)$/.test(f)) || frames[0];
    return el('details', {}, el('summary', {}, headline), el('pre', {}, frames.join('\n')));
  };
  return el('section', {id: 'health', class: 'stalled-banner'},
    el('h2', {}, `Stalled for ${seconds(health.stalled_for_ns)} s`),
    el('p', {class: 'muted'}, `No rank has left a traced call for ${seconds(health.stalled_for_ns)} s ` +
      `(stalled after ${seconds(health.stall_after_ns)} s).`),
    (health.stalls || []).map((s) => el('p', {class: 'stall', 'data-kind': s.kind}, stallText(s))),
    sortableTable('stall-ranks', [
      {title: 'rank', numeric: true, value: (r) => r.rank},
      {title: 'suspect', value: (r) => ((health.stalls || []).some((s) =>
        (s.suspect_ranks || []).includes(r.rank)) ? 'yes' : '')},
      {title: 'in', value: (r) => !r.in ? '(no traced call)' :
        r.waits_for ? `${r.in} for ${r.waits_for}` : r.in},
      {title: 'for (s)', numeric: true, value: (r) => num(r.in_for_ns), text: (r) => seconds(r.in_for_ns)},
      {title: 'node', value: (r) => r.node},
      {title: 'pid', numeric: true, value: (r) => num(r.pid)},
      {title: 'stack', value: (r) => [...(r.python_stack || []), ...(r.stack || [])][0] || '',
       text: stackOf},
    ], stallRanks), slowdownsSection(health));
}

async function showJobs() {
  const main = document.getElementById('main');
  const draw = async () => {
    const reply = await api('/api/jobs');
    const jobs = reply.jobs || [];
    const columns = [
      {title: 'job', value: (j) => j.job,
       text: (j) => el('a', {href: '#/job/' + encodeURIComponent(j.job)}, j.job)},
      {title: 'start', value: (j) => num(j.start_ns),
       text: (j) => num(j.start_ns) ? new Date(num(j.start_ns) / 1e6).toISOString() : '-'},
      {title: 'duration (s)', numeric: true, value: (j) => num(j.end_ns) - num(j.start_ns),
       text: (j) => ((num(j.end_ns) - num(j.start_ns)) / 1e9).toFixed(3)},
      {title: 'ranks', numeric: true, value: (j) => j.ranks,
       text: (j) => j.world_size ? `${j.ranks} / ${j.world_size}` : String(j.ranks)},
      {title: 'spans', numeric: true, value: (j) => num(j.spans),
       text: (j) => num(j.spans).toLocaleString('en')},
      // Spans its probes dropped (full rings): holes in its timeline.
      {title: 'dropped', numeric: true, value: (j) => num(j.spans_dropped),
       text: (j) => num(j.spans_dropped) ?
         el('span', {class: 'dropped'}, num(j.spans_dropped).toLocaleString('en')) : '0'},
      {title: 'nodes', numeric: true, value: (j) => j.nodes},
      {title: 'size', numeric: true, value: (j) => num(j.stored_bytes),
       text: (j) => size(num(j.stored_bytes))},
      {title: 'state', value: (j) => (j.health === 'stalled' ? 'stalled' : isLive(j) ? 'live' : 'finished'),
       text: (j) => j.health === 'stalled' ? el('span', {class: 'stalled'}, 'stalled') :
         isLive(j) ? el('span', {class: 'live'}, 'live') :
         (j.incomplete ? 'finished, incomplete' : 'finished')},
    ];
    // Stalled jobs first, above the list.
    const stalled = jobs.filter((j) => j.health === 'stalled');
    main.replaceChildren(el('section', {},
      el('h1', {}, 'Jobs'),
      stalled.length ? el('p', {id: 'stalled-jobs', class: 'stalled-banner'}, 'Stalled: ',
        stalled.flatMap((j, i) => [i ? ', ' : '',
          el('a', {href: '#/job/' + encodeURIComponent(j.job)}, j.job)])) : '',
      jobs.length ? sortableTable('jobs', columns, jobs) :
        el('p', {class: 'muted'}, 'No jobs yet.')));
    setStatus(`${jobs.length} jobs`);
  };
  await draw();
  timers.push(setInterval(() => draw().catch((e) => setStatus(e.message, true)), POLL_MS));
}

// ---- one job ----

function stepChartOption(steps, rank) {
  const pick = (s) => (rank === 'mean' ? s : (s.ranks || []).find((r) => String(r.rank) === rank) || {});
  const x = steps.map((s) => s.step);
  const part = (key) => steps.map((s) => num(pick(s)[key]) / 1e6);
  const overlap = part('overlap_ns');
  const compute = part('compute_ns').map((v, i) => v - overlap[i]);
  const comm = part('communication_ns').map((v, i) => v - overlap[i]);
  return {
    animation: false,
    tooltip: {trigger: 'axis'},
    legend: {data: ['compute only', 'communication only', 'overlap', 'iteration']},
    grid: {left: 50, right: 20, top: 30, bottom: 40},
    xAxis: {type: 'category', data: x, name: 'step', nameLocation: 'middle', nameGap: 24},
    yAxis: {type: 'value', name: 'ms'},
    dataZoom: steps.length > 100 ? [{type: 'inside'}, {type: 'slider', height: 14}] : [],
    series: [
      {name: 'compute only', type: 'bar', stack: 't', data: compute, large: true, color: '#2563eb'},
      {name: 'communication only', type: 'bar', stack: 't', data: comm, large: true, color: '#ea580c'},
      {name: 'overlap', type: 'bar', stack: 't', data: overlap, large: true, color: '#16a34a'},
      {name: 'iteration', type: 'line', data: part('dur_ns'), showSymbol: false, color: '#111827'},
    ],
  };
}

function heatmapOption(map) {
  const rows = map.rank_starts.length, columns = map.step_starts.length;
  const data = [];
  let max = 0;
  for (let r = 0; r < rows; ++r) {
    for (let s = 0; s < columns; ++s) {
      const v = num(map.wait_ns[r * columns + s]) / 1e6;
      max = Math.max(max, v);
      data.push([s, r, v]);
    }
  }
  const rankLabel = (r) => {
    const first = map.rank_starts[r];
    const last = r + 1 < rows ? map.rank_starts[r + 1] - 1 : map.last_rank;
    return first === last ? `rank ${first}` : `ranks ${first}-${last}`;
  };
  const stepLabel = (s) => {
    const first = map.step_starts[s];
    const last = s + 1 < columns ? map.step_starts[s + 1] - 1 : map.last_step;
    return first === last ? String(first) : `${first}-${last}`;
  };
  return {
    animation: false,
    tooltip: {formatter: (p) => `${rankLabel(p.value[1])}, step ${stepLabel(p.value[0])}: others waited ${p.value[2].toFixed(3)} ms`},
    // The legend stands right of the grid, clear of the step axis's labels
    // and name below it.
    grid: {left: 90, right: 110, top: 10, bottom: 40},
    xAxis: {type: 'category', data: map.step_starts.map((_, s) => stepLabel(s)), name: 'step',
      nameLocation: 'middle', nameGap: 24},
    yAxis: {type: 'category', data: map.rank_starts.map((_, r) => rankLabel(r))},
    visualMap: {min: 0, max: max || 1, calculable: true, orient: 'vertical', right: 10, top: 'middle',
      itemHeight: 120, text: ['ms', ''], inRange: {color: ['#f8fafc', '#fdba74', '#b91c1c']}},
    series: [{type: 'heatmap', data, progressive: 4000}],
  };
}

function pathOption(path) {
  const segments = path.segments || [];
  const ranks = [...new Set(segments.map((s) => s.rank))].sort((a, b) => a - b);
  const start = num(path.start_ns);
  const data = segments.map((s) => ({
    value: [ranks.indexOf(s.rank), (num(s.start_ns) - start) / 1e6,
      (num(s.start_ns) + num(s.dur_ns) - start) / 1e6, s.name || '(untraced)', className(s.time_class)],
    itemStyle: {color: CLASS_COLORS[s.time_class] || '#9ca3af'},
  }));
  return {
    animation: false,
    tooltip: {formatter: (p) => `rank ${ranks[p.value[0]]} ${p.value[4]}: ${p.value[3]}, ${(p.value[2] - p.value[1]).toFixed(3)} ms`},
    grid: {left: 70, right: 20, top: 10, bottom: 40},
    xAxis: {type: 'value', name: 'ms', nameLocation: 'middle', nameGap: 24, min: 0,
      max: num(path.dur_ns) / 1e6},
    yAxis: {type: 'category', data: ranks.map((r) => `rank ${r}`)},
    series: [{
      type: 'custom',
      encode: {x: [1, 2], y: 0},
      data,
      renderItem: (params, api) => {
        const y = api.value(0);
        const from = api.coord([api.value(1), y]);
        const to = api.coord([api.value(2), y]);
        const height = api.size([0, 1])[1] * 0.6;
        return {type: 'rect', shape: {x: from[0], y: from[1] - height / 2,
          width: Math.max(to[0] - from[0], 1), height}, style: api.style()};
      },
    }],
  };
}

async function showPath(name, step, container) {
  const query = `/api/critical-path?job=${encodeURIComponent(name)}` +
    (step === null ? '' : `&step=${step}`);
  const path = await api(query);
  const segments = path.segments || [];
  const title = step === null ? 'Critical path of the whole job' : `Critical path of step ${step}`;
  const chartDiv = chart('path-chart', true);
  const breakdown = ['compute_ns', 'communication_ns', 'waiting_ns', 'setup_ns', 'untraced_ns']
    .map((k) => `${k.replace('_ns', '').replace('setup', 'set-up')} ${ms(path[k])} ms`).join(', ');
  container.replaceChildren(
    el('h2', {id: 'path-title'}, `${title}: ${ms(path.dur_ns)} ms`),
    el('p', {id: 'path-breakdown'}, breakdown, '. Ranks crossed: ',
      [...new Set(segments.map((s) => s.rank))].join(', ')),
    chartDiv,
    sortableTable('path-segments', [
      {title: 'at (ms)', numeric: true, value: (s) => num(s.start_ns) - num(path.start_ns),
       text: (s) => ms(num(s.start_ns) - num(path.start_ns))},
      {title: 'rank', numeric: true, value: (s) => s.rank},
      {title: 'class', value: (s) => className(s.time_class),
       text: (s) => el('span', {class: 'class-' + className(s.time_class)}, className(s.time_class))},
      {title: 'name', value: (s) => s.name || '(untraced)'},
      {title: 'dur (ms)', numeric: true, value: (s) => num(s.dur_ns), text: (s) => ms(s.dur_ns)},
    ], segments));
  mount(chartDiv, pathOption(path));
}

async function traceBuffer(name, step) {
  let url = `/api/trace?job=${encodeURIComponent(name)}`;
  if (step !== null) url += `&first_step=${step}&last_step=${step}`;
  const response = await fetch(url, {headers: headers()});
  if (!response.ok) throw new Error((await response.json()).error);
  return response.arrayBuffer();
}

// Perfetto UI's postMessage protocol: PING until it answers PONG, then hand
// it the trace. The window opens at once, while the click still counts as
// the user's (browsers block pop-ups opened later).
async function openInPerfetto(name, step) {
  const origin = config.perfetto_ui;
  const ui = window.open(origin);
  if (!ui) throw new Error('the browser blocked the Perfetto window');
  const buffer = await traceBuffer(name, step);
  const title = step === null ? name : `${name} step ${step}`;
  await new Promise((resolve) => {
    const ping = setInterval(() => ui.postMessage('PING', origin), 250);
    const listen = (event) => {
      if (event.source !== ui || event.data !== 'PONG') return;
      clearInterval(ping);
      window.removeEventListener('message', listen);
      resolve();
    };
    window.addEventListener('message', listen);
  });
  ui.postMessage({perfetto: {buffer, title}}, origin);
}

async function download(name, step) {
  const blob = new Blob([await traceBuffer(name, step)], {type: 'application/json'});
  const a = el('a', {href: URL.createObjectURL(blob),
    download: `${name}${step === null ? '' : '-step' + step}.trace.json`});
  document.body.append(a);
  a.click();
  a.remove();
}

async function showJob(name, selectedStep) {
  const enc = encodeURIComponent(name);
  const [list, steps, stragglers] = await Promise.all([
    api(`/api/job?job=${enc}`), api(`/api/steps?job=${enc}`), api(`/api/stragglers?job=${enc}`)]);
  const job = (list.jobs || [])[0] || {};
  const stepList = steps.steps || [];
  const main = document.getElementById('main');
  const summary = el('p', {id: 'summary'});
  const drawSummary = (j) => summary.replaceChildren(
    `${j.ranks}${j.world_size ? ' of ' + j.world_size : ''} ranks on ${j.nodes} nodes, `,
    `${num(j.spans).toLocaleString('en')} spans, `,
    `${((num(j.end_ns) - num(j.start_ns)) / 1e9).toFixed(3)} s`,
    num(j.spans_dropped) ? el('span', {class: 'dropped', id: 'dropped'},
      `, ${num(j.spans_dropped).toLocaleString('en')} spans dropped (full rings: missing from the timeline)`) : '',
    isLive(j) ? el('span', {class: 'live', id: 'live'}, ' live') : '');
  drawSummary(job);

  const rankSelect = el('select', {id: 'step-rank'}, el('option', {value: 'mean'}, 'mean of the ranks'),
    (job.rank_ids || []).map((r) => el('option', {value: String(r)}, `rank ${r}`)));
  const stepDiv = chart('step-chart');
  const map = stragglers.heatmap;
  const heatDiv = chart('heatmap');
  const pathSection = el('section', {id: 'path'});
  const slowest = stepList.slice().sort((a, b) => num(b.dur_ns) - num(a.dur_ns)).slice(0, 10);
  const step = selectedStep !== null ? selectedStep :
    (slowest.length ? Number(slowest[0].step) : null);
  const perfetto = el('button', {id: 'open-perfetto', onclick: () =>
    openInPerfetto(name, step).catch((e) => setStatus(e.message, true))}, 'Open in Perfetto');
  const save = el('button', {id: 'download', onclick: () =>
    download(name, step).catch((e) => setStatus(e.message, true))}, 'Download trace');
  const hottest = map && Number(map.hottest_rank) >= 0 ?
    `Hottest: rank ${map.hottest_rank} in step ${map.hottest_step}` :
    'No rank made the others wait.';
  // A live job's health at the top, asked again with its other figures.
  const healthDiv = el('div', {id: 'health-top'});
  const drawHealth = async () => {
    if (!isLive(job)) return;
    const health = await api(`/api/health?job=${enc}`);
    healthDiv.replaceChildren(healthBanner(health));
    markSlowdowns(stepChart, health.slowdowns || []);
  };
  main.replaceChildren(
    el('h1', {}, name),
    healthDiv,
    summary,
    el('div', {class: 'actions'}, perfetto, save,
      el('span', {class: 'muted'}, step === null ? 'the whole job' : `step ${step}`)),
    el('div', {class: 'grid'},
      el('section', {}, el('h2', {}, 'Step time (ms) ', rankSelect), stepDiv),
      el('section', {}, el('h2', {}, 'Time others waited for each rank (stragglers)'),
        el('p', {id: 'hottest', 'data-rank': map ? map.hottest_rank : -1,
          'data-step': map ? map.hottest_step : -1}, hottest), heatDiv)),
    el('div', {class: 'grid'},
      el('section', {}, el('h2', {}, 'Slowest steps'),
        sortableTable('slowest', [
          {title: 'step', numeric: true, value: (s) => Number(s.step)},
          {title: 'iteration (ms)', numeric: true, value: (s) => num(s.dur_ns), text: (s) => ms(s.dur_ns)},
          {title: 'slowest rank', numeric: true, value: (s) => s.slowest_rank},
        ], slowest, (s) => { location.hash = `#/job/${enc}/step/${s.step}`; })),
      pathSection),
    el('div', {class: 'grid'}, el('section', {id: 'clocks'}, el('h2', {}, 'Clocks'), 'Loading…'),
      el('section', {id: 'stats'}, el('h2', {}, 'MPI and NCCL statistics'), 'Loading…')));
  const stepChart = mount(stepDiv, stepChartOption(stepList, 'mean'));
  // The collector sends one rank's figures at a time (1,024 ranks x 1,000
  // steps would be 100 MB).
  const stepsOf = async (rank) => (await api(`/api/steps?job=${enc}` +
    (rank === 'mean' ? '' : `&rank=${rank}`))).steps || [];
  rankSelect.addEventListener('change', async () => {
    const rank = rankSelect.value;
    const fresh = await stepsOf(rank);
    if (rankSelect.value === rank) stepChart.setOption(stepChartOption(fresh, rank));
  });
  if (map && map.rank_starts.length) mount(heatDiv, heatmapOption(map));
  else heatDiv.replaceWith(el('p', {class: 'muted'}, 'No collectives with steps.'));
  for (const tr of document.querySelectorAll('#slowest tbody tr')) {
    if (step !== null && tr.dataset.key === String(step)) tr.classList.add('selected');
  }
  await drawHealth().catch((e) => setStatus(e.message, true));
  await showPath(name, step, pathSection);
  showClocksAndStats(name).catch((e) => setStatus(e.message, true));
  if (isLive(job)) {
    timers.push(setInterval(async () => {
      const rank = rankSelect.value;
      const [again, fresh] = await Promise.all([api(`/api/job?job=${enc}`), stepsOf(rank),
        drawHealth()]);
      drawSummary((again.jobs || [])[0] || job);
      stepChart.setOption(stepChartOption(fresh, rank));
      setStatus(`updated ${new Date().toLocaleTimeString()}`);
    }, POLL_MS));
  }
  setStatus(`${stepList.length} steps`);
}

async function showClocksAndStats(name) {
  const enc = encodeURIComponent(name);
  const [clocks, stats] = await Promise.all([api(`/api/clocks?job=${enc}`), api(`/api/stats?job=${enc}`)]);
  const nodes = clocks.nodes || [];
  const clockDiv = chart('clock-chart', true);
  document.getElementById('clocks').replaceChildren(el('h2', {}, 'Clocks'), clockDiv,
    sortableTable('clock-table', [
      {title: 'node', value: (n) => n.node},
      {title: 'ranks', value: (n) => (n.ranks || []).join(',')},
      {title: 'offset (us)', numeric: true, value: (n) => num(n.offset_ns), text: (n) => (num(n.offset_ns) / 1e3).toFixed(1)},
      {title: 'drift (ppb)', numeric: true, value: (n) => num(n.drift_ppb)},
      {title: '± (us)', numeric: true, value: (n) => num(n.uncertainty_ns), text: (n) => (num(n.uncertainty_ns) / 1e3).toFixed(1)},
      {title: 'correction (us)', numeric: true, value: (n) => num(n.correction_ns), text: (n) => (num(n.correction_ns) / 1e3).toFixed(1)},
    ], nodes),
    el('p', {class: 'muted'}, `${num(clocks.violations_before)} causality violations before refinement, ${num(clocks.violations_after)} after.`));
  // Each node's offset over the job, from its clock models.
  const points = nodes.flatMap((n) => n.timeline || []);
  if (points.length) {
    const t0 = Math.min(...points.map((p) => num(p.reference_ns)));
    mount(clockDiv, {
      animation: false,
      tooltip: {trigger: 'axis'},
      legend: {type: 'scroll', top: 0},
      grid: {left: 60, right: 60, top: 30, bottom: 30},
      xAxis: {type: 'value', name: 's', scale: true},
      yAxis: [{type: 'value', name: 'offset (us)', scale: true},
        {type: 'value', name: 'drift (ppb)', scale: true, splitLine: {show: false}}],
      series: nodes.flatMap((n) => [{
        name: n.node, type: 'line', showSymbol: (n.timeline || []).length < 3,
        data: (n.timeline || []).map((p) => [(num(p.reference_ns) - t0) / 1e9,
          num(p.offset_ns) / 1e3]),
      }, {
        name: `${n.node} drift`, type: 'line', yAxisIndex: 1, lineStyle: {type: 'dashed'},
        showSymbol: (n.timeline || []).length < 3,
        data: (n.timeline || []).map((p) => [(num(p.reference_ns) - t0) / 1e9,
          num(p.drift_ppb)]),
      }]),
    });
  } else {
    clockDiv.replaceWith(el('p', {class: 'muted'}, 'No clock models: the nodes were not measured against the collector.'));
  }
  document.getElementById('stats').replaceChildren(el('h2', {}, 'MPI and NCCL statistics'),
    sortableTable('stats-table', [
      {title: 'operation', value: (o) => o.name},
      {title: 'calls', numeric: true, value: (o) => num(o.calls)},
      {title: 'avg bytes', numeric: true, value: (o) => (num(o.calls) ? num(o.bytes) / num(o.calls) : 0),
       text: (o) => (num(o.calls) ? num(o.bytes) / num(o.calls) : 0).toFixed(1)},
      {title: 'time (s)', numeric: true, value: (o) => num(o.dur_ns), text: (o) => (num(o.dur_ns) / 1e9).toFixed(6)},
    ], stats.ops || []),
    el('h2', {}, 'Per rank'),
    sortableTable('rank-stats-table', [
      {title: 'rank', numeric: true, value: (r) => r.rank},
      {title: 'host', value: (r) => r.host},
      {title: 'calls', numeric: true, value: (r) => num(r.calls)},
      {title: 'communication (s)', numeric: true, value: (r) => num(r.comm_ns), text: (r) => (num(r.comm_ns) / 1e9).toFixed(6)},
      {title: 'elapsed (s)', numeric: true, value: (r) => num(r.mpi_elapsed_ns),
       text: (r) => (num(r.mpi_elapsed_ns) ? (num(r.mpi_elapsed_ns) / 1e9).toFixed(6) : '-')},
      {title: 'traced (s)', numeric: true, value: (r) => num(r.elapsed_ns),
       text: (r) => (num(r.elapsed_ns) ? (num(r.elapsed_ns) / 1e9).toFixed(6) : '-')},
    ], stats.ranks || []));
}

// ---- compare ----

async function showCompare(params) {
  const main = document.getElementById('main');
  const a = el('input', {id: 'compare-a', placeholder: 'job A', value: params.get('a') || ''});
  const b = el('input', {id: 'compare-b', placeholder: 'job B', value: params.get('b') || ''});
  const ranks = el('input', {id: 'compare-ranks', placeholder: 'or ranks R1,R2 of A', value: params.get('ranks') || ''});
  const form = el('p', {}, a, ' ', b, ' ', ranks, ' ', el('button', {id: 'compare-go', onclick: () => {
    const q = new URLSearchParams({a: a.value});
    if (ranks.value) q.set('ranks', ranks.value); else q.set('b', b.value);
    location.hash = '#/compare?' + q.toString();
  }}, 'Compare'));
  main.replaceChildren(el('section', {}, el('h1', {}, 'Compare'), form, el('div', {id: 'compare-result'})));
  if (!params.get('a')) return;
  const q = new URLSearchParams({a: params.get('a')});
  if (params.get('ranks')) q.set('ranks', params.get('ranks')); else q.set('b', params.get('b') || '');
  const reply = await api('/api/compare?' + q.toString());
  document.getElementById('compare-result').replaceChildren(
    el('p', {}, `A: ${reply.a}; B: ${reply.b}`),
    sortableTable('compare-table', [
      {title: 'operation', value: (o) => o.name},
      {title: 'A time (ms)', numeric: true, value: (o) => num(o.a && o.a.dur_ns), text: (o) => ms(o.a && o.a.dur_ns)},
      {title: 'B time (ms)', numeric: true, value: (o) => num(o.b && o.b.dur_ns), text: (o) => ms(o.b && o.b.dur_ns)},
      {title: 'B - A (ms)', numeric: true, value: (o) => num(o.diff && o.diff.dur_ns), text: (o) => ms(o.diff && o.diff.dur_ns)},
      {title: 'A calls', numeric: true, value: (o) => num(o.a && o.a.count)},
      {title: 'B calls', numeric: true, value: (o) => num(o.b && o.b.count)},
    ], reply.ops || []));
}

// ---- routing ----

async function route() {
  reset();
  const hash = location.hash || '#/';
  try {
    let m;
    if ((m = hash.match(/^#\/job\/([^/]+)\/step\/(-?\d+)$/))) {
      await showJob(decodeURIComponent(m[1]), Number(m[2]));
    } else if ((m = hash.match(/^#\/job\/([^/]+)$/))) {
      await showJob(decodeURIComponent(m[1]), null);
    } else if (hash.startsWith('#/compare')) {
      await showCompare(new URLSearchParams(hash.split('?')[1] || ''));
    } else {
      await showJobs();
    }
  } catch (error) {
    setStatus(error.message, true);
    showError(error);
  }
}

window.addEventListener('hashchange', route);
window.addEventListener('resize', () => charts.forEach((c) => c.resize()));
api('/api/config').then((c) => { config = c; }).catch(() => {}).finally(route);
