/* MENTOR trace viewer. Plain DOM and SVG, no libraries, no network except the live server's own /api.
 * Every string from the traces reaches the page through textContent or setAttribute, never as markup. */
(function () {
  'use strict';
  var SVGNS = 'http://www.w3.org/2000/svg';
  var PAGE_SIZE = 50;
  window.mentorScriptStart = performance.now();  // HTML parsed up to here: the embedded data is tokenised
  var DATA = JSON.parse(document.getElementById('mentor-data').textContent);
  window.mentorDataParsed = performance.now();
  var META = DATA.meta || {};
  var records = (DATA.interventions || []).map(traceRecord);
  var steps = DATA.steps || [];
  var runs = DATA.runs || [];
  var byId = new Map();
  var searchCache = new Map();
  var filtered = [];
  var page = 0;
  var selectedId = null;
  records.forEach(function (r) { byId.set(r.id, r); });

  // A stored trace record in the current shape (mentor.trace_format.TraceRecord), as decoded_record gives it:
  // a record of an earlier version gets `reference` and `previous_hints` from the group its error classifier wrote
  // back ({} and [] where none did), `hinted_prompt` and `teacher_prompt` null (not recorded) and, from a JSONL file,
  // `recovered` null.
  // tests/test_trace_format.py checks both decoders on tests/data/trace_records.json.
  function traceRecord(raw) {
    var r = Object.assign({}, raw);
    if (!Object.prototype.hasOwnProperty.call(r, 'reference')) {
      var written = {};
      (Array.isArray(r.nodes) ? r.nodes : []).some(function (n) {
        var out = n && typeof n === 'object' && !Array.isArray(n) ? n.output : null;
        var ok = out && typeof out === 'object' && !Array.isArray(out) && out.group && typeof out.group === 'object'
          && !Array.isArray(out.group);
        if (ok) written = out.group;
        return ok;
      });
      var ref = written.reference;
      r.reference = ref && typeof ref === 'object' && !Array.isArray(ref) ? ref : {};
      if (!Object.prototype.hasOwnProperty.call(r, 'previous_hints')) r.previous_hints = written.previous_hints || [];
    }
    ['previous_hints', 'hinted_prompt', 'teacher_prompt', 'recovered'].forEach(function (k) {
      if (!Object.prototype.hasOwnProperty.call(r, k)) r[k] = k === 'previous_hints' ? [] : null;
    });
    return r;
  }

  // --- DOM helpers ------------------------------------------------------------------------------------------
  function addKids(el, kids) {
    for (var i = 0; i < kids.length; i++) {
      var k = kids[i];
      if (k === null || k === undefined || k === false) continue;
      if (Array.isArray(k)) { addKids(el, k); continue; }
      el.appendChild(typeof k === 'object' ? k : document.createTextNode(String(k)));
    }
    return el;
  }
  function setProps(el, props) {
    if (!props) return el;
    Object.keys(props).forEach(function (key) {
      var v = props[key];
      if (v === null || v === undefined || v === false) return;
      if (key === 'class') el.setAttribute('class', v);
      else if (key === 'text') el.textContent = String(v);
      else if (key.slice(0, 2) === 'on') el.addEventListener(key.slice(2), v);
      else el.setAttribute(key, String(v));
    });
    return el;
  }
  function h(tag, props) {
    return addKids(setProps(document.createElement(tag), props), Array.prototype.slice.call(arguments, 2));
  }
  function s(tag, props) {
    return addKids(setProps(document.createElementNS(SVGNS, tag), props), Array.prototype.slice.call(arguments, 2));
  }
  function $(id) { return document.getElementById(id); }
  function clear(el) { while (el.firstChild) el.removeChild(el.firstChild); return el; }

  // --- formatting -------------------------------------------------------------------------------------------
  function isNum(x) { return typeof x === 'number' && isFinite(x); }
  function fmtNum(x, digits) {
    if (!isNum(x)) return x === null || x === undefined ? '-' : String(x);
    if (Number.isInteger(x)) return String(x);
    return x.toFixed(digits === undefined ? 3 : digits);
  }
  function count(x) { return fmtNum(Math.round(x * 100) / 100, 2); }  // an axis tick of counts
  function signif(x) { return isNum(x) ? String(Number(x.toPrecision(2))) : '-'; }
  function pct(x) { return isNum(x) ? Math.round(100 * x) + '%' : '-'; }
  function ms(seconds) { return isNum(seconds) ? (1000 * seconds).toFixed(seconds < 0.01 ? 2 : 1) + ' ms' : '-'; }
  function json(x) { try { return JSON.stringify(x, null, 2); } catch (e) { return String(x); } }
  function drafts(r) { return (r.leak && Array.isArray(r.leak.leaked_drafts)) ? r.leak.leaked_drafts : []; }
  function diag(r) { return r.diagnosis || {}; }
  function errClass(r) { return diag(r).error_class || 'unknown'; }
  // The retry control's record (`hint_source: none`, Intervention.redraw in mentor/types.py): the group re-drawn
  // unhinted, no graph run, so no hint, tier, leakage verdict or error class; its `hint` is only a marker.
  var REDRAW = 're-draw (no hint)';
  function isRedraw(r) { return !!(r.backend && r.backend.hint_source === 'none'); }
  // An all-pass group's re-draw (`redraw_all_pass`, mentor.trace_format.ALL_PASS_SOURCE): its attempts all
  // succeeded, so it got no hint; `replacement` holds the fresh row's group that took its place.
  var ALL_PASS = 'all passed: re-drawn';
  function isAllPass(r) { return !!(r.backend && r.backend.hint_source === 'all_pass'); }
  function undiagnosed(r) { return isRedraw(r) || isAllPass(r); }  // no graph ran
  function hinted(r) { return r.hint !== null && r.hint !== undefined && !undiagnosed(r); }
  function hasOutcome(r) { return typeof r.recovered === 'boolean'; }  // null: no re-attempt (a JSONL file)
  function rewardCell(x) {
    return h('td', { class: isNum(x) && x > 0 ? 'reward-pos' : null, text: fmtNum(x) });
  }

  // --- summary ----------------------------------------------------------------------------------------------
  function summarise() {
    var st = { n: records.length, hinted: 0, redrawn: 0, allPass: 0, withheld: 0, leaks: 0, recovered: 0, withOutcome: 0, errors: 0,
               fallbacks: 0, stepMap: new Map(), classes: new Map(), tiers: new Map(), nodes: new Map() };
    records.forEach(function (r) {
      var hasStep = isNum(r.step);
      var sk = hasStep ? r.step : null;
      var d = drafts(r).length;
      st.leaks += d;
      st.fallbacks += (r.fallbacks || []).length;
      if (r.error) st.errors += 1;
      if (r.withheld) st.withheld += 1;
      if (isRedraw(r)) st.redrawn += 1;
      if (isAllPass(r)) st.allPass += 1;
      if (hinted(r)) {
        st.hinted += 1;
        var t = 'tier ' + r.tier;
        st.tiers.set(t, (st.tiers.get(t) || 0) + 1);
      }
      if (!undiagnosed(r)) {  // a re-draw was never diagnosed
        var c = st.classes.get(errClass(r)) || { n: 0, rec: 0, out: 0 };
        c.n += 1;
        if (hasOutcome(r) && hinted(r)) { c.out += 1; c.rec += r.recovered ? 1 : 0; }
        st.classes.set(errClass(r), c);
      }
      if (hasOutcome(r)) { st.withOutcome += 1; st.recovered += r.recovered ? 1 : 0; }
      if (sk !== null) {
        var e = st.stepMap.get(sk) || { n: 0, leaks: 0, withheld: 0 };
        e.n += 1; e.leaks += d; e.withheld += r.withheld ? 1 : 0;
        st.stepMap.set(sk, e);
      }
      (r.nodes || []).forEach(function (nd) {
        var m = st.nodes.get(nd.node) || { sum: 0, n: 0, backends: new Map() };
        if (isNum(nd.latency_s)) { m.sum += nd.latency_s; m.n += 1; }
        if (nd.backend) m.backends.set(nd.backend, (m.backends.get(nd.backend) || 0) + 1);
        st.nodes.set(nd.node, m);
      });
    });
    if (st.withheld) st.tiers.set('withheld', st.withheld);
    return st;
  }

  function card(label, value, title) {
    return h('div', { class: 'card', title: title }, h('div', { class: 'v', text: value }), h('div', { class: 'k', text: label }));
  }

  // The top of a count axis with four gridlines: 4 x a step of 1, 2, 2.5 or 5 x 10^k, whole numbers when small.
  function niceMax(v) {
    if (!(v > 0)) return 4;
    var raw = v / 4, p = Math.pow(10, Math.floor(Math.log10(raw))), f = raw / p;
    var step = (f <= 1 ? 1 : f <= 2 ? 2 : f <= 2.5 ? 2.5 : f <= 5 ? 5 : 10) * p;
    if (step < 1) step = 1;
    if (step === 2.5) step = 3;
    return 4 * step;
  }

  function figure(id, title, legend, body) {
    var fig = h('figure', { class: 'plot', 'data-plot': id }, h('figcaption', { text: title }));
    if (legend && legend.length) {
      fig.appendChild(h('div', { class: 'legend' }, legend.map(function (l, i) {
        return h('span', null, h('i', { class: 'sw', style: 'background:' + ['var(--accent)', 'var(--before)', 'var(--warn)', 'var(--good)'][l.cls === undefined ? i : l.cls] }), l.name);
      })));
    }
    fig.appendChild(body);
    return fig;
  }
  function empty(text) { return h('div', { class: 'empty', text: text }); }

  var W = 360, H = 190, M = { l: 38, r: 10, t: 10, b: 28 };

  // The y axis runs from yMin (default 0) to yMax.
  function axes(svg, xs, yMax, yFmt, yMin) {
    var iw = W - M.l - M.r, ih = H - M.t - M.b, lo = yMin || 0;
    for (var i = 0; i <= 4; i++) {
      var y = M.t + ih - ih * i / 4;
      svg.appendChild(s('line', { class: 'grid', x1: M.l, x2: W - M.r, y1: y, y2: y }));
      svg.appendChild(s('text', { class: 'tick', x: M.l - 4, y: y + 3, 'text-anchor': 'end', text: yFmt(lo + (yMax - lo) * i / 4) }));
    }
    svg.appendChild(s('line', { class: 'axis', x1: M.l, x2: W - M.r, y1: M.t + ih, y2: M.t + ih }));
    svg.appendChild(s('line', { class: 'axis', x1: M.l, x2: M.l, y1: M.t, y2: M.t + ih }));
    var every = Math.max(1, Math.ceil(xs.length / 8));
    var room = Math.max(3, Math.floor(iw / Math.min(xs.length, 8) / 6.5));  // characters that fit under a slot
    xs.forEach(function (x, i) {
      var last = i === xs.length - 1 && i % every >= every / 2;  // the last one too, if it has room
      if (i % every !== 0 && !last) return;
      var label = x.label.length > room ? x.label.slice(0, room - 1) + '\u2026' : x.label;
      svg.appendChild(s('text', { class: 'tick', x: x.px, y: H - M.b + 13, 'text-anchor': 'middle', text: label },
        s('title', { text: x.label })));
    });
    return { iw: iw, ih: ih };
  }

  // Grouped bars: labels along x, one bar per series in each group.
  function barChart(labels, series, opts) {
    opts = opts || {};
    var svg = s('svg', { viewBox: '0 0 ' + W + ' ' + H, role: 'img' });
    var yMax = opts.yMax || niceMax(Math.max.apply(null, [0].concat(series.map(function (sr) { return Math.max.apply(null, [0].concat(sr.values)); }))));
    var iw = W - M.l - M.r, ih = H - M.t - M.b, slot = iw / Math.max(labels.length, 1);
    var bw = Math.max(0.5, slot * 0.8 / series.length);
    var xs = labels.map(function (l, i) { return { label: String(l), px: M.l + slot * (i + 0.5) }; });
    axes(svg, xs, yMax, opts.yFmt || count);
    series.forEach(function (sr, k) {
      sr.values.forEach(function (v, i) {
        var bh = ih * (isNum(v) ? v : 0) / yMax;
        var x = M.l + slot * i + slot * 0.1 + bw * k;
        svg.appendChild(s('rect', { class: 'mark s' + (sr.cls === undefined ? k : sr.cls), x: x.toFixed(2), y: (M.t + ih - bh).toFixed(2),
                                    width: bw.toFixed(2), height: Math.max(bh, 0).toFixed(2), 'data-value': v, 'data-label': labels[i] },
          s('title', { text: sr.name + ' · ' + labels[i] + ': ' + (opts.yFmt ? opts.yFmt(v) : fmtNum(v)) })));
        if (opts.notes) {  // the value written above the bar, so a bar of 0 reads as a measured 0, not a broken chart
          if (bh < 1.5) svg.appendChild(s('rect', { class: 'stub s' + (sr.cls === undefined ? k : sr.cls), x: x.toFixed(2), y: (M.t + ih - 1.5).toFixed(2), width: bw.toFixed(2), height: 1.5 }));
          svg.appendChild(s('text', { class: 'note', x: (x + bw / 2).toFixed(2), y: (M.t + ih - Math.max(bh, 1.5) - 4).toFixed(2), 'text-anchor': 'middle', text: opts.notes[i] }));
        }
      });
    });
    return svg;
  }

  // Lines over numeric x (steps); y in [yMin, yMax] (default [0, 1]).
  function lineChart(xsRaw, series, opts) {
    opts = opts || {};
    var svg = s('svg', { viewBox: '0 0 ' + W + ' ' + H, role: 'img' });
    var yMax = opts.yMax || 1, yMin = opts.yMin || 0, yFmt = opts.yFmt || pct;
    var iw = W - M.l - M.r, ih = H - M.t - M.b;
    var lo = Math.min.apply(null, xsRaw), hi = Math.max.apply(null, xsRaw);
    var span = hi > lo ? hi - lo : 1;
    function px(x) { return xsRaw.length === 1 ? M.l + iw / 2 : M.l + iw * (x - lo) / span; }
    function py(y) { return M.t + ih - ih * (Math.max(yMin, Math.min(yMax, y)) - yMin) / (yMax - yMin); }
    axes(svg, xsRaw.map(function (x) { return { label: String(x), px: px(x) }; }), yMax, yFmt, yMin);
    series.forEach(function (sr, k) {
      var d = '', pts = [];
      xsRaw.forEach(function (x, i) {
        var v = sr.values[i];
        if (!isNum(v)) return;
        d += (d ? 'L' : 'M') + px(x).toFixed(1) + ',' + py(v).toFixed(1);
        pts.push([x, v]);
      });
      // Each earlier series is drawn wider and paler, under the later ones: where two coincide (before = after),
      // both stay visible, the later one inside the earlier one's band.
      var cls = 's' + (sr.cls === undefined ? k : sr.cls), below = series.length - 1 - k;
      var width = 2 + 3.5 * below, radius = 2.5 + 2.5 * below, under = below ? ' under' : '';
      svg.appendChild(s('path', { class: 'line ' + cls + under, d: d || 'M0,0', style: 'fill:none;stroke-width:' + width }));
      if (pts.length <= 300) {
        pts.forEach(function (p) {
          svg.appendChild(s('circle', { class: 'mark ' + cls + under, cx: px(p[0]).toFixed(1), cy: py(p[1]).toFixed(1), r: radius, 'data-value': p[1] },
            s('title', { text: sr.name + ' · step ' + p[0] + ': ' + yFmt(p[1]) })));
        });
      } else {
        svg.lastChild.setAttribute('class', 'line mark ' + cls);
      }
    });
    return svg;
  }

  function renderSummary() {
    var st = summarise();
    var cards = clear($('cards'));
    cards.appendChild(card('interventions', String(st.n - st.allPass)));  // an all-pass re-draw mentored nothing
    cards.appendChild(card('hints given', String(st.hinted)));
    if (st.redrawn) {
      cards.appendChild(card('re-draws', String(st.redrawn),
                             'collapsed groups the retry control (hint_source: none) re-drew without a hint'));
    }
    if (st.allPass) {
      cards.appendChild(card('all-pass re-draws', String(st.allPass),
                             'groups whose attempts all passed, replaced by a fresh row\'s group (redraw_all_pass)'));
    }
    cards.appendChild(card('recovered', st.withOutcome ? pct(st.recovered / st.withOutcome) : 'n/a',
                           st.withOutcome ? st.recovered + ' of ' + st.withOutcome : 'no re-attempts in this file'));
    cards.appendChild(card('withheld', String(st.withheld)));
    cards.appendChild(card('leaks blocked', String(st.leaks), 'rejected hint drafts'));
    cards.appendChild(card('llm fallbacks', String(st.fallbacks)));
    cards.appendChild(card('failed runs', String(st.errors)));
    cards.appendChild(card('steps', String(steps.length || st.stepMap.size)));
    var graduation = steps.filter(function (x) { return isNum(x['mentor/graduated_total']); });
    if (graduation.length) {
      cards.appendChild(card('graduated', String(graduation[graduation.length - 1]['mentor/graduated_total']),
                             'problems hinted at an earlier step whose group later earned reward without a hint, over the run'));
    }
    var reliance = steps.filter(function (x) { return isNum(x['mentor/reliance']); });
    var relyValues = reliance.map(function (x) { return x['mentor/reliance']; });
    if (reliance.length) {
      cards.appendChild(card('hint reliance', signif(relyValues.reduce(function (a, b) { return a + b; }, 0) / relyValues.length),
                             'mean over ' + relyValues.length + ' step(s) of mentor/reliance: log p(y|x) - log p(y|x+hint) per token, over the correct hinted rows'));
    }

    var plots = clear($('plots'));
    var stepKeys = Array.from(st.stepMap.keys()).sort(function (a, b) { return a - b; });
    plots.appendChild(figure('per-step', 'Interventions per step', null, stepKeys.length
      ? barChart(stepKeys, [{ name: 'interventions', values: stepKeys.map(function (k) { return st.stepMap.get(k).n; }) }])
      : empty('no training steps in this file (mentor diagnose output)')));

    var withRates = steps.filter(function (x) { return isNum(x['mentor/collapse_rate_before']); });
    plots.appendChild(figure('collapse', 'Collapse rate per step: before and after the mentor',
      [{ name: 'before', cls: 1 }, { name: 'after', cls: 0 }], withRates.length
        ? lineChart(withRates.map(function (x) { return x.step; }), [
            { name: 'before', cls: 1, values: withRates.map(function (x) { return x['mentor/collapse_rate_before']; }) },
            { name: 'after', cls: 0, values: withRates.map(function (x) { return x['mentor/collapse_rate_after']; }) }])
        : empty('no per-step metrics in this file')));

    var classes = Array.from(st.classes.entries()).sort(function (a, b) { return b[1].n - a[1].n; }).slice(0, 12);
    var anyOutcome = classes.some(function (c) { return c[1].out > 0; });
    var redrawsOnly = !classes.length && st.redrawn > 0;  // the retry control's run: no class to chart
    plots.appendChild(redrawsOnly
      ? figure('recovery', 'Recovery rate by error class', null,
          empty('re-draws only: the retry control (hint_source: none) diagnoses no error class'))
      : anyOutcome
      ? figure('recovery', 'Recovery rate by error class', null,
          barChart(classes.map(function (c) { return c[0]; }),
                   [{ name: 'recovered', cls: 3, values: classes.map(function (c) { return c[1].out ? c[1].rec / c[1].out : 0; }) }],
                   { yMax: 1, yFmt: pct, notes: classes.map(function (c) { return pct(c[1].out ? c[1].rec / c[1].out : 0) + ' of ' + c[1].out; }) }))
      : figure('recovery', 'Interventions by error class (no re-attempts recorded)', null, classes.length
          ? barChart(classes.map(function (c) { return c[0]; }), [{ name: 'interventions', values: classes.map(function (c) { return c[1].n; }) }])
          : empty('no interventions yet')));

    var tierKeys = Array.from(st.tiers.keys()).sort();
    plots.appendChild(figure('tiers', 'Tier distribution of hints (and withheld)', null, tierKeys.length
      ? barChart(tierKeys, [{ name: 'interventions', values: tierKeys.map(function (k) { return st.tiers.get(k); }) }])
      : empty(st.redrawn ? 'no hints: re-draws have no tier' : 'no hints yet')));

    plots.appendChild(figure('leaks', 'Leaks blocked and hints withheld per step',
      [{ name: 'leaks blocked', cls: 1 }, { name: 'withheld', cls: 2 }], stepKeys.length
        ? barChart(stepKeys, [
            { name: 'leaks blocked', cls: 1, values: stepKeys.map(function (k) { return st.stepMap.get(k).leaks; }) },
            { name: 'withheld', cls: 2, values: stepKeys.map(function (k) { return st.stepMap.get(k).withheld; }) }])
        : barChart(['all'], [{ name: 'leaks blocked', cls: 1, values: [st.leaks] }, { name: 'withheld', cls: 2, values: [st.withheld] }])));
    plots.appendChild(figure('graduated', 'Graduated problems: per step, and over the run',
      [{ name: 'this step', cls: 3 }, { name: 'over the run', cls: 0 }], graduation.length
        ? lineChart(graduation.map(function (x) { return x.step; }), [
            { name: 'this step', cls: 3, values: graduation.map(function (x) { return x['mentor/graduated']; }) },
            { name: 'over the run', cls: 0, values: graduation.map(function (x) { return x['mentor/graduated_total']; }) }],
            { yMax: niceMax(Math.max.apply(null, graduation.map(function (x) { return x['mentor/graduated_total']; }))),
              yFmt: count })
        : empty('no graduation metrics in this file')));

    // The axis spans 0 and every value, with a margin: reliance has either sign.
    var relyLo = Math.min.apply(null, [0].concat(relyValues)), relyHi = Math.max.apply(null, [0].concat(relyValues));
    var relyPad = 0.1 * (relyHi - relyLo || 1);
    plots.appendChild(figure('reliance', 'Hint reliance per step, per token (below 0: the hint helps)',
      null, reliance.length
        ? lineChart(reliance.map(function (x) { return x.step; }),
            [{ name: 'reliance', cls: 2, values: relyValues }],
            { yMin: relyLo - relyPad, yMax: relyHi + relyPad, yFmt: signif })
        : empty('no reliance in this file (off unless the mentor config sets reliance_every)')));
    renderGraph(st);
    renderRuns();
  }

  // --- what ran: each run's graph and prompt files, with their hashes (mentor.runtime.versions) ----------------
  function fileRows(files) {
    return h('table', { class: 'files' }, h('tbody', null, (files || []).map(function (f) {
      return h('tr', null, h('td', { class: 'hash', text: String(f.sha256 || '').slice(0, 12), title: f.sha256 || null }),
               h('td', { class: 'path', text: f.path }));
    })));
  }

  function renderRuns() {
    var box = clear($('runs'));
    if (!runs.length) {
      box.appendChild(h('p', { class: 'muted', text: META.kind === 'jsonl'
        ? 'A JSONL file records no versions; `mentor diagnose` printed them when it ran.'
        : 'This store records no versions (written before they were recorded).' }));
      return;
    }
    runs.forEach(function (run, i) {
      var g = run.graph || {}, p = run.prompts || {}, b = run.backends || {};
      box.appendChild(h('div', { class: 'run' },
        h('div', { class: 'nh' }, h('b', { text: 'run ' + (i + 1) }), h('span', { class: 'badge', text: 'from step ' + fmtNum(run.step) })),
        h('div', { class: 'kv' },
          h('span', { class: 'k', text: 'graph' }), h('span', { class: 'v path', text: g.file ? g.file : g.spec || '-' }),
          h('span', { class: 'k', text: 'backends' }), h('span', { class: 'v', text: Object.keys(b).map(function (k) { return k + '=' + b[k]; }).join(', ') || '-' }),
          h('span', { class: 'k', text: 'prompts' }), h('span', { class: 'v path', text: p.dir || '-' })),
        h('details', { class: 'graph-files' }, h('summary', { text: 'graph files (' + (g.files || []).length + ')' }), fileRows(g.files)),
        h('details', { class: 'prompt-files' }, h('summary', { text: 'prompt files (' + (p.files || []).length + ')' }), fileRows(p.files))));
    });
  }

  // --- the graph --------------------------------------------------------------------------------------------
  function renderGraph(st) {
    var box = clear($('graphbox'));
    var g = DATA.graph;
    if (!g || !g.nodes || !g.nodes.length) {
      box.appendChild(h('p', { class: 'muted', text: 'The graph could not be loaded when this page was built' + (g && g.error ? ': ' + g.error : '.') }));
      return;
    }
    var ids = g.nodes.map(function (n) { return n.id; });
    var out = new Map(ids.map(function (id) { return [id, []]; }));
    g.edges.forEach(function (e) { if (out.has(e.source) && out.has(e.target)) out.get(e.source).push(e); });
    // Back edges: those that close a cycle in a depth-first walk from the start.
    var state = new Map(), back = new Set();
    function dfs(id) {
      state.set(id, 1);
      out.get(id).forEach(function (e) {
        var t = state.get(e.target);
        if (t === 1) back.add(e);
        else if (!t) dfs(e.target);
      });
      state.set(id, 2);
    }
    var start = ids.indexOf('__start__') >= 0 ? '__start__' : ids[0];
    dfs(start);
    ids.forEach(function (id) { if (!state.get(id)) dfs(id); });
    // Rank: longest path over forward edges.
    var rank = new Map(ids.map(function (id) { return [id, 0]; }));
    for (var pass = 0; pass < ids.length; pass++) {
      var changed = false;
      g.edges.forEach(function (e) {
        if (back.has(e) || !rank.has(e.source) || !rank.has(e.target)) return;
        if (rank.get(e.target) < rank.get(e.source) + 1) { rank.set(e.target, rank.get(e.source) + 1); changed = true; }
      });
      if (!changed) break;
    }
    var cols = new Map();
    ids.forEach(function (id) { var r = rank.get(id); if (!cols.has(r)) cols.set(r, []); cols.get(r).push(id); });
    var maxRows = Math.max.apply(null, Array.from(cols.values()).map(function (c) { return c.length; }));
    var NW = 160, NH = 50, TW = 78, GX = 60, GY = 30, TOP = 60;
    var colX = [], x = 10, nCols = Math.max.apply(null, Array.from(cols.keys())) + 1;
    for (var c = 0; c < nCols; c++) {
      var wide = (cols.get(c) || []).some(function (id) { return id.slice(0, 2) !== '__'; });
      colX.push(x); x += (wide ? NW : TW) + GX;
    }
    var width = x - GX + 10, height = TOP + maxRows * (NH + GY) + 10;
    var pos = new Map();
    cols.forEach(function (list, r) {
      list.forEach(function (id, i) {
        var term = id.slice(0, 2) === '__';
        var w = term ? TW : NW, hgt = term ? 30 : NH;
        var cy = TOP + (maxRows * (NH + GY) - GY) / 2 + (i - (list.length - 1) / 2) * (NH + GY);
        pos.set(id, { x: colX[r], y: cy - hgt / 2, w: w, h: hgt, cx: colX[r] + w / 2, cy: cy });
      });
    });
    var svg = s('svg', { viewBox: '0 0 ' + width + ' ' + height, width: width, height: height, role: 'img', id: 'graph-svg' },
      s('defs', null, s('marker', { id: 'arrow', viewBox: '0 0 10 10', refX: 9, refY: 5, markerWidth: 7, markerHeight: 7, orient: 'auto-start-reverse' },
        s('path', { d: 'M0,0L10,5L0,10z', fill: '#56616b' }))));
    var backN = 0;
    g.edges.forEach(function (e) {
      var a = pos.get(e.source), b = pos.get(e.target);
      if (!a || !b) return;
      var cls = 'gedge' + (e.conditional ? ' cond' : '') + (back.has(e) ? ' back' : '');
      var d, lx, ly;
      if (back.has(e) || rank.get(e.target) <= rank.get(e.source)) {
        var lift = 30 + 14 * backN++;
        d = 'M' + a.cx + ',' + a.y + ' C' + a.cx + ',' + (a.y - lift) + ' ' + b.cx + ',' + (b.y - lift) + ' ' + b.cx + ',' + b.y;
        lx = (a.cx + b.cx) / 2; ly = Math.min(a.y, b.y) - lift * 0.75 - 3;
      } else {
        var x1 = a.x + a.w, x2 = b.x, mid = (x1 + x2) / 2;
        d = 'M' + x1 + ',' + a.cy + ' C' + mid + ',' + a.cy + ' ' + mid + ',' + b.cy + ' ' + x2 + ',' + b.cy;
        lx = mid; ly = (a.cy + b.cy) / 2 - 5;
      }
      svg.appendChild(s('path', { class: cls, d: d, 'marker-end': 'url(#arrow)', 'data-edge': e.source + '->' + e.target }));
      var label = e.label || (back.has(e) ? 'leak: retry' : '');
      if (label) svg.appendChild(s('text', { class: 'glabel', x: lx, y: ly, text: label }));
    });
    ids.forEach(function (id) {
      var p = pos.get(id), term = id.slice(0, 2) === '__';
      var node = (g.nodes.find(function (n) { return n.id === id; }) || {});
      var grp = s('g', { class: 'gnode' + (term ? ' term' : ''), 'data-node': id },
        s('rect', { x: p.x, y: p.y, width: p.w, height: p.h, rx: term ? 15 : 6 }),
        s('text', { x: p.cx, y: term ? p.cy + 4 : p.cy - 3, text: term ? id.replace(/_/g, '') : (node.name || id) }));
      var m = st.nodes.get(id);
      if (m && !term) {
        var backends = Array.from(m.backends.keys()).join(', ');
        grp.appendChild(s('text', { class: 'sub', x: p.cx, y: p.cy + 13, text: (m.n ? 'mean ' + ms(m.sum / m.n) + ' · ' : '') + (backends || '') }));
        grp.appendChild(s('title', { text: id + ': ' + m.n + ' runs' }));
      }
      svg.appendChild(grp);
    });
    box.appendChild(svg);
    if (g.mermaid) box.appendChild(h('details', { class: 'mermaid' }, h('summary', { class: 'muted', text: 'mermaid source' }), h('pre', { text: g.mermaid })));
  }

  // --- list and filters -------------------------------------------------------------------------------------
  function searchText(r) {
    var t = searchCache.get(r.id);
    if (t !== undefined) return t;
    var d = diag(r), parts = [r.problem_id, r.task, r.prompt, r.error].concat(
      isRedraw(r) ? [REDRAW] : [r.hint, d.error_class, d.root_cause]);
    (r.attempts || []).forEach(function (a) { parts.push(a.completion); });
    (r.reattempt || []).forEach(function (a) { parts.push(a.completion); });
    drafts(r).forEach(function (x) { parts.push(x.draft, x.reason, (x.detectors || []).join(' ')); });
    (r.fallbacks || []).forEach(function (f) { parts.push(f); });
    t = parts.filter(function (p) { return p !== null && p !== undefined; }).join('\n').toLowerCase();
    searchCache.set(r.id, t);
    return t;
  }

  function numOrNull(el) { var v = el.value.trim(); return v === '' ? null : Number(v); }

  function readFilters() {
    return { stepMin: numOrNull($('f-step-min')), stepMax: numOrNull($('f-step-max')), cls: $('f-class').value,
             recovered: $('f-recovered').value, withheld: $('f-withheld').value, tier: $('f-tier').value,
             terms: $('f-search').value.toLowerCase().split(/\s+/).filter(Boolean) };
  }

  function matches(r, f) {
    if (f.stepMin !== null && !(r.step >= f.stepMin)) return false;
    if (f.stepMax !== null && !(r.step <= f.stepMax)) return false;
    if (f.cls && (isRedraw(r) || errClass(r) !== f.cls)) return false;
    if (f.recovered && (!!r.recovered) !== (f.recovered === 'yes')) return false;
    if (f.withheld && (!!r.withheld) !== (f.withheld === 'yes')) return false;
    if (f.tier !== '' && (isRedraw(r) || String(r.tier) !== f.tier)) return false;
    if (f.terms.length) {
      var t = searchText(r);
      for (var i = 0; i < f.terms.length; i++) if (t.indexOf(f.terms[i]) < 0) return false;
    }
    return true;
  }

  function applyFilters(keepPage) {
    var f = readFilters();
    filtered = records.filter(function (r) { return matches(r, f); });
    var pages = Math.max(1, Math.ceil(filtered.length / PAGE_SIZE));
    page = keepPage ? Math.min(page, pages - 1) : 0;
    renderList();
  }

  function refreshOptions() {
    var classes = new Set(), tiers = new Set();
    records.forEach(function (r) {
      if (isRedraw(r)) return;  // neither a class nor a tier
      classes.add(errClass(r));
      if (r.tier !== undefined && r.tier !== null) tiers.add(String(r.tier));
    });
    [[$('f-class'), Array.from(classes).sort()], [$('f-tier'), Array.from(tiers).sort()]].forEach(function (pair) {
      var sel = pair[0], have = new Set(Array.from(sel.options).map(function (o) { return o.value; }));
      pair[1].forEach(function (v) { if (!have.has(v)) sel.appendChild(h('option', { value: v, text: v })); });
    });
  }

  function outcomeBadges(r) {
    var out = [];
    if (r.error) out.push(h('span', { class: 'badge no', text: 'failed' }));
    if (r.withheld) out.push(h('span', { class: 'badge warn', text: 'withheld' }));
    if (hasOutcome(r)) out.push(h('span', { class: 'badge ' + (r.recovered ? 'ok' : 'no'), text: r.recovered ? 'recovered' : 'not recovered' }));
    var n = drafts(r).length;
    if (n) out.push(h('span', { class: 'badge', title: 'rejected drafts', text: n + ' leak' + (n > 1 ? 's' : '') }));
    return out;
  }

  function renderList() {
    var body = clear(document.querySelector('#list tbody'));
    var start = page * PAGE_SIZE, rows = filtered.slice(start, start + PAGE_SIZE);
    var frag = document.createDocumentFragment();
    rows.forEach(function (r) {
      var open = function () { showDetail(r.id); };
      frag.appendChild(h('tr', { 'data-id': r.id, class: r.id === selectedId ? 'sel' : null, tabindex: 0, onclick: open,
                                 onkeydown: function (ev) { if (ev.key === 'Enter') open(); } },
        h('td', { text: r.id }), h('td', { text: fmtNum(r.step) }), h('td', { text: fmtNum(r.round) }),
        h('td', { class: 'pid', text: r.problem_id, title: r.problem_id }),
        h('td', { class: 'cls', text: undiagnosed(r) ? '-' : errClass(r), title: undiagnosed(r) ? null : errClass(r) }),
        h('td', { text: undiagnosed(r) ? '-' : fmtNum(r.tier) }),
        isRedraw(r) ? h('td', { class: 'hint redraw', text: REDRAW })
          : isAllPass(r) ? h('td', { class: 'hint redraw', text: ALL_PASS })
          : h('td', { class: 'hint', text: r.hint === null || r.hint === undefined ? '-' : r.hint,
                      title: r.hint || null }),
        h('td', { class: 'outcome' }, outcomeBadges(r))));
    });
    body.appendChild(frag);
    var pages = Math.max(1, Math.ceil(filtered.length / PAGE_SIZE));
    $('count').textContent = filtered.length + ' of ' + records.length + ' interventions';
    $('pageinfo').textContent = 'page ' + (page + 1) + ' of ' + pages;
    $('prev').disabled = page <= 0;
    $('next').disabled = page >= pages - 1;
  }

  // --- one intervention -------------------------------------------------------------------------------------
  // With several reward functions each attempt keeps its part of each (`rewards`): a column per function.
  function rewardNames(list) {
    var names = [];
    list.forEach(function (a) {
      if (a && a.rewards && typeof a.rewards === 'object' && !Array.isArray(a.rewards)) {
        Object.keys(a.rewards).forEach(function (k) { if (names.indexOf(k) < 0 && names.length < 16) names.push(k); });
      }
    });
    return names;
  }

  function completionTable(list) {
    var names = rewardNames(list);
    return h('table', { class: 'completions' },
      h('thead', null, h('tr', null, [h('th', { text: '#' }), h('th', { text: 'completion' }), h('th', { text: 'reward' })]
        .concat(names.map(function (n) { return h('th', { class: 'part', text: n, title: 'this reward function\'s score' }); })))),
      h('tbody', null, list.map(function (a, i) {
        return h('tr', null, [h('td', { text: i + 1 }), h('td', null, h('pre', { text: a.completion })), rewardCell(a.reward)]
          .concat(names.map(function (n) { return rewardCell(a.rewards ? a.rewards[n] : null); })));
      })));
  }

  function showDetail(id) {
    var r = byId.get(id);
    if (!r) return;
    selectedId = id;
    Array.prototype.forEach.call(document.querySelectorAll('#list tbody tr'), function (tr) {
      tr.classList.toggle('sel', Number(tr.getAttribute('data-id')) === id);
    });
    if (location.hash !== '#i' + id) history.replaceState(null, '', '#i' + id);
    var d = diag(r), el = clear($('detail'));
    el.setAttribute('data-id', id);
    el.appendChild(h('h2', null, 'Intervention #' + id + ' · ', h('span', { class: 'pid', text: r.problem_id })));
    el.appendChild(h('div', null,
      isNum(r.step) ? h('span', { class: 'badge', text: 'step ' + r.step }) : null,
      isNum(r.group) ? h('span', { class: 'badge', text: 'group ' + r.group }) : null,
      isNum(r.round) ? h('span', { class: 'badge', text: 'round ' + r.round }) : null,
      r.task ? h('span', { class: 'badge', text: r.task }) : null,
      r.memory ? h('span', { class: 'badge memory', id: 'detail-memory', text: 'from memory: the hint that rescued '
        + String(r.memory.problem_id) + ' at step ' + fmtNum(r.memory.step) + ' (no graph ran)' }) : null,
      r.strategy ? h('span', { class: 'badge', text: 'strategy ' + r.strategy }) : null,
      r.placement ? h('span', { class: 'badge', text: 'placement ' + r.placement }) : null,
      outcomeBadges(r)));
    if (r.error) el.appendChild(h('div', { class: 'errorbox', text: r.error }));
    if (r.prompt) { el.appendChild(h('h3', { text: 'Problem' })); el.appendChild(h('pre', { class: 'prompt', text: r.prompt })); }

    if (r.attempts) {
      el.appendChild(h('h3', { text: (isAllPass(r) ? 'Attempts, all passed (' : 'Failed attempts (') + r.attempts.length + ')' }));
      el.appendChild(h('div', { class: 'attempts' }, completionTable(r.attempts)));
    }
    if (isRedraw(r)) { redrawDetail(el, r); return; }
    if (isAllPass(r)) { allPassDetail(el, r); return; }

    el.appendChild(h('h3', { text: 'Diagnosis' }));
    el.appendChild(h('div', { class: 'kv diagnosis' },
      h('span', { class: 'k', text: 'error class' }), h('span', { class: 'v', text: errClass(r) }),
      h('span', { class: 'k', text: 'per attempt' }), h('span', { class: 'v', text: Object.keys(d.error_classes || {}).map(function (k) { return k + ': ' + d.error_classes[k]; }).join(', ') || '-' }),
      h('span', { class: 'k', text: 'root cause' }), h('span', { class: 'v', text: d.root_cause || '-' }),
      h('span', { class: 'k', text: 'first error step' }), h('span', { class: 'v', text: fmtNum(d.first_error_step) })));

    var given = r.hint !== null && r.hint !== undefined;
    el.appendChild(h('h3', { text: 'Hint' + (given ? ' (tier ' + fmtNum(r.tier) + ')' : '') }));
    el.appendChild(h('pre', { class: 'hintbox' + (given ? '' : ' none'), id: 'detail-hint',
                              text: given ? r.hint : r.withheld ? 'withheld: every draft leaked, so the policy got no hint' : 'no hint' }));
    var teacher = typeof r.teacher_prompt === 'string';  // SDPOTrainer: the hint was the self-teacher's feedback
    if (teacher) {
      el.appendChild(h('h3', { text: 'What the SDPO teacher saw (its reprompt, as tokenized; no re-attempt)' }));
      el.appendChild(h('pre', { class: 'prompt sent', id: 'detail-teacher', text: r.teacher_prompt }));
    } else if (given) {  // what the policy saw: the hint placed in the prompt, the chat template applied, as sent
      el.appendChild(h('h3', { text: 'Prompt sent with the hint' + (r.placement ? ' (placement ' + r.placement + ')' : '') }));
      el.appendChild(typeof r.hinted_prompt === 'string'
        ? h('pre', { class: 'prompt sent', id: 'detail-sent', text: r.hinted_prompt })
        : h('p', { class: 'muted', id: 'detail-sent', text: 'not recorded: a trace of an earlier version, or no policy saw the hint (mentor diagnose); the problem and the hint are shown apart above' }));
    }

    if (Array.isArray(r.candidates) && r.candidates.length) {  // hint_choice: learning, mentor/trl/choice.py
      el.appendChild(h('h3', { text: 'Hints tried (' + r.candidates.length + '): the best p(1 - p) x reliance weight was given' }));
      el.appendChild(h('table', { class: 'candidates', id: 'detail-candidates' },
        h('thead', null, h('tr', null, ['source', 'hint', 'p', 'reliance', 'score', 'given'].map(function (k) {
          return h('th', { text: k });
        }))),
        h('tbody', null, r.candidates.map(function (c) {
          return h('tr', { class: c.chosen ? 'chosen' : null }, h('td', { text: String(c.source) }),
            h('td', null, h('pre', { text: String(c.hint) })), h('td', { text: fmtNum(c.p) }),
            h('td', { text: fmtNum(c.reliance) }), h('td', { text: fmtNum(c.score) }),
            h('td', { text: c.chosen ? 'yes' : '' }));
        }))));
    }

    var ds = drafts(r);
    el.appendChild(h('h3', { text: 'Rejected drafts (' + ds.length + ')' }));
    el.appendChild(h('div', { class: 'drafts' }, ds.length ? ds.map(function (x, i) {
      return h('div', { class: 'draft' },
        h('div', null, h('b', { text: 'draft ' + (i + 1) }), ' ', isNum(x.tier) ? h('span', { class: 'badge', text: 'tier ' + x.tier }) : null,
          (x.detectors || []).map(function (det) { return h('span', { class: 'badge detector', text: det }); })),
        h('pre', { class: 'draft-text', text: x.draft }),
        x.reason ? h('div', { class: 'muted reason', text: x.reason }) : null);
    }) : h('p', { class: 'muted', text: 'none: the first draft passed the leakage checker' })));

    var nodes = r.nodes || [], io = nodeIO(nodes);
    el.appendChild(h('h3', { text: 'Nodes (' + nodes.length + ')' }));
    el.appendChild(h('div', { class: 'nodes' }, nodes.map(function (nd, i) {
      return h('div', { class: 'node', 'data-node': nd.node },
        h('div', { class: 'nh' }, h('span', { class: 'muted', text: String(i + 1) + '.' }), h('b', { text: nd.node }),
          h('span', { class: 'latency', text: ms(nd.latency_s) }), h('span', { class: 'badge backend', text: nd.backend || '?' })),
        nd.error ? h('div', { class: 'errorbox', text: nd.error }) : null,
        typeof nd.prompt === 'string' ? lazyText('prompt sent', nd.prompt) : null,
        replies(nd),
        lazyJson('input', io[i].input), lazyJson('output', io[i].output));
    })));
    if ((r.fallbacks || []).length) {
      el.appendChild(h('h3', { text: 'LLM fallbacks' }));
      el.appendChild(h('ul', null, r.fallbacks.map(function (f) { return h('li', { text: f }); })));
    }

    if (r.reattempt && !teacher) {
      el.appendChild(h('h3', { text: 'Re-attempt with the hint (' + r.reattempt.length + ')' + outcomeText(r) }));
      el.appendChild(h('div', { class: 'reattempt' }, r.reattempt.length ? completionTable(r.reattempt)
        : h('p', { class: 'muted', text: given ? 'no re-attempt recorded' : 'no hint, so no re-attempt' })));
    }
  }

  function outcomeText(r) { return hasOutcome(r) ? (r.recovered ? ': recovered' : ': not recovered') : ''; }

  // A re-draw's detail past its failed attempts: no graph ran, so no diagnosis, tier, drafts or nodes; its re-draw.
  function redrawDetail(el, r) {
    el.appendChild(h('h3', { text: 'Hint' }));
    el.appendChild(h('pre', { class: 'hintbox none', id: 'detail-hint', text: REDRAW + ': the retry control '
      + '(hint_source: none) ran no graph and re-drew the group from its unhinted prompt' }));
    var list = Array.isArray(r.reattempt) ? r.reattempt : [];
    el.appendChild(h('h3', { text: 'Re-draw without a hint (' + list.length + ')' + outcomeText(r) }));
    el.appendChild(h('div', { class: 'reattempt' }, list.length ? completionTable(list)
      : h('p', { class: 'muted', text: 'no re-draw recorded' })));
  }

  // An all-pass group's detail past its attempts: no graph ran and no hint was given; the group that replaced it.
  function allPassDetail(el, r) {
    var x = r.replacement || {}, list = Array.isArray(x.attempts) ? x.attempts : [];
    el.appendChild(h('h3', { text: 'Replaced by a fresh row (redraw_all_pass)' }));
    el.appendChild(h('div', { class: 'kv replacement', id: 'detail-replacement' },
      h('span', { class: 'k', text: 'problem' }), h('span', { class: 'v', text: String(x.problem_id || '-') }),
      h('span', { class: 'k', text: 'zero variance' }), h('span', { class: 'v', text: x.zero_variance ? 'yes' : 'no' }),
      h('span', { class: 'k', text: 'collapsed' }), h('span', { class: 'v', text: x.collapsed ? 'yes: the mentor got it' : 'no' })));
    if (typeof x.prompt === 'string') el.appendChild(h('pre', { class: 'prompt', text: x.prompt }));
    el.appendChild(h('div', { class: 'reattempt' }, list.length ? completionTable(list)
      : h('p', { class: 'muted', text: 'no replacement recorded' })));
  }

  // Each node's whole input and output, rebuilt from the compact node records of mentor/trace_format.py: input keys
  // an earlier node wrote are named in `inherited` with the node(s) that wrote them (several: an accumulating list),
  // and an output string that repeats an input value is {"$input": key}. mentor.trace_format.node_io does the same;
  // tests/test_trace_format.py checks both on tests/data/node_records.json.
  function nodeIO(nodes) {
    var full = [];
    nodes.forEach(function (nd) {
      var input = Object.assign({}, nd.input || {}), inherited = nd.inherited || {};
      Object.keys(inherited).forEach(function (k) {
        var values = inherited[k].map(function (j) {
          return full[j] && full[j].output ? full[j].output[k] : undefined;
        });
        input[k] = values.length === 1 ? values[0] : [].concat.apply([], values);
      });
      full.push({ input: input, output: deref(nd.output, input) });
    });
    return full;
  }

  function deref(value, input) {
    if (Array.isArray(value)) return value.map(function (v) { return deref(v, input); });
    if (!value || typeof value !== 'object') return value;
    var keys = Object.keys(value), out = {};
    if (keys.length === 1 && keys[0] === '$input') return input[value.$input];
    keys.forEach(function (k) { out[k] = deref(value[k], input); });
    return out;
  }

  function lazyJson(label, value) {
    var pre = h('pre', { class: 'json' });
    var det = h('details', { class: label }, h('summary', { text: label }), pre);
    var filled = false;
    det.addEventListener('toggle', function () { if (det.open && !filled) { pre.textContent = json(value); filled = true; } });
    return det;
  }

  // An llm node's raw replies, before parsing, re-asks included (a record of an earlier version has none).
  function replies(nd) {
    var list = (Array.isArray(nd.replies) ? nd.replies : []).filter(function (t) { return typeof t === 'string'; });
    return list.map(function (text, i) {
      return lazyText(list.length > 1 ? 'reply ' + (i + 1) + ' of ' + list.length : 'reply received', text, 'reply');
    });
  }

  function lazyText(label, text, kind) {  // kind: 'prompt' (default: the prompt as sent) or 'reply'
    var pre = h('pre', { class: kind === 'reply' ? 'reply-text' : 'prompt-sent' });
    var det = h('details', { class: kind || 'prompt' }, h('summary', { text: label }), pre);
    det.addEventListener('toggle', function () { if (det.open) pre.textContent = text; });
    return det;
  }

  // --- live updates (mentor traces serve) -------------------------------------------------------------------
  function maxId() { return records.length ? records[records.length - 1].id : 0; }

  // The served page holds no records: it loads them in batches (the server bounds each answer), then polls.
  var pendingDetail = null;  // an #iN to open once its record has arrived
  function poll() {
    var limit = 1000, got = 0;
    var badge = $('live');
    fetch('api/interventions?after_id=' + maxId() + '&limit=' + limit, { cache: 'no-store' })
      .then(function (res) { if (!res.ok) throw new Error(res.status); return res.json(); })
      .then(function (items) {
        got = items.length;
        items.forEach(function (raw) { if (!byId.has(raw.id)) { var r = traceRecord(raw); records.push(r); byId.set(r.id, r); } });
        return fetch('api/runs', { cache: 'no-store' }).then(function (res) { return res.json(); });
      })
      .then(function (newRuns) {
        var reread = false;
        if (JSON.stringify(newRuns) !== JSON.stringify(runs)) {
          runs = newRuns; renderRuns();
          reread = steps.length > 0;  // a resumed run rewrites its steps: read them all again
        }
        return newSteps(reread ? [] : steps);
      })
      .then(function (next) {
        var stepsChanged = next !== steps;
        steps = next;
        if (got || stepsChanged) { refreshOptions(); renderSummary(); applyFilters(true); }
        if (pendingDetail !== null && byId.has(pendingDetail)) { showDetail(pendingDetail); pendingDetail = null; }
        badge.className = '';
        badge.textContent = 'live · updated ' + new Date().toLocaleTimeString();
      })
      .catch(function () { badge.className = 'down'; badge.textContent = 'live · server unreachable, retrying'; })
      .then(function () { setTimeout(poll, got ? 0 : (META.poll_ms || 2000)); });  // more may wait: ask again
  }

  // `held` with its last step read again (a step's metrics are rewritten while it trains on) and the steps after
  // it, page by page (the server bounds each answer) until one comes back empty; `held` itself when nothing changed.
  function newSteps(held) {
    var last = held.length ? held[held.length - 1] : null;
    var fresh = [];
    function more() {
      var at = fresh.length ? fresh[fresh.length - 1].step : held.length > 1 ? held[held.length - 2].step : null;
      return fetch('api/steps?limit=1000' + (at === null ? '' : '&after_step=' + at), { cache: 'no-store' })
        .then(function (res) { if (!res.ok) throw new Error(res.status); return res.json(); })
        .then(function (page) {
          if (!page.length) return done();
          page.forEach(function (s) { fresh.push(s); });
          return more();
        });
    }
    function done() {
      var same = fresh.length === (last ? 1 : 0) && (!last || JSON.stringify(fresh[0]) === JSON.stringify(last));
      return same ? held : held.slice(0, last ? -1 : 0).concat(fresh);
    }
    return more();
  }

  // --- start ------------------------------------------------------------------------------------------------
  $('source').textContent = (META.kind === 'jsonl' ? 'mentor diagnose output: ' : 'run: ') + (META.source || '');
  var debounce = null;
  $('filters').addEventListener('input', function (ev) {
    clearTimeout(debounce);
    if (ev.target.id === 'f-search') debounce = setTimeout(function () { applyFilters(false); }, 120);
    else applyFilters(false);
  });
  $('filters').addEventListener('change', function () { applyFilters(false); });
  $('filters').addEventListener('reset', function () { setTimeout(function () { applyFilters(false); }, 0); });
  $('filters').addEventListener('submit', function (ev) { ev.preventDefault(); });
  $('prev').addEventListener('click', function () { if (page > 0) { page -= 1; renderList(); } });
  $('next').addEventListener('click', function () { page += 1; renderList(); });

  refreshOptions();
  applyFilters(false);
  window.mentorListRendered = performance.now();
  renderSummary();
  var m = /^#i(\d+)$/.exec(location.hash);
  if (m && byId.has(Number(m[1]))) showDetail(Number(m[1]));
  else if (m) pendingDetail = Number(m[1]);
  if (META.live) { $('live').hidden = false; $('live').textContent = 'live'; setTimeout(poll, 0); }
  window.mentorViewer = { records: function () { return records; }, filtered: function () { return filtered; },
                          applyFilters: applyFilters, showDetail: showDetail };
  window.mentorReady = performance.now();
})();
