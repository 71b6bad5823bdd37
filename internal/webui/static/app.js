// Prism endurance page. Plain JavaScript, no framework; the chart is uPlot.
// Every number comes from Prometheus through this server's /api/query proxy,
// using only the node agent's metrics (docs/metrics.md).
(function () {
  'use strict';

  var DAY = 86400;
  var CHART_SERIES = 10; // the soonest-wearing nodes of the page drawn in the chart
  var REFRESH_MS = 60000;
  var PALETTE = ['#d62728', '#1f77b4', '#ff7f0e', '#2ca02c', '#9467bd', '#8c564b', '#e377c2', '#7f7f7f', '#bcbd22', '#17becf'];

  // The server holds the PromQL: the page asks for its queries by name (internal/webui/queries.go).
  var OSD_ROWS = 25;

  var params = new URLSearchParams(window.location.search);
  var state = {
    page: Math.max(0, parseInt(params.get('page') || '1', 10) - 1) || 0,
    size: parseInt(params.get('size') || '25', 10),
    range: parseInt(params.get('range') || '3600', 10),
    metric: params.get('metric') === 'days' ? 'days' : 'wear',
    total: 0,
    rows: [],
    seq: 0
  };
  if (!(state.size >= 1 && state.size <= 1000)) state.size = 25;

  var $ = function (id) { return document.getElementById(id); };
  var api = window.prismEndurance = { ready: false, chart: null, rows: [], osds: [], errors: [] };

  // ---- Prometheus ----------------------------------------------------------

  function prom(q) {
    return fetch('api/query?' + new URLSearchParams(q).toString(), { headers: { Accept: 'application/json' } })
      .then(function (resp) {
        // The sign-in cookie expired: reloading shows the sign-in form.
        if (resp.status === 401) window.location.reload();
        return resp.json().catch(function () { throw new Error('HTTP ' + resp.status + ' without a JSON body'); });
      })
      .then(function (body) {
        if (body.status !== 'success') throw new Error(body.error || 'query failed');
        return body.data.result;
      });
  }
  // instant asks for the page's query name with its parameters (k, nodes or osds).
  function instant(name, args) { return prom(Object.assign({ name: name }, args || {})); }
  function rangeQuery(name, nodes, start, end, step) {
    return prom({ kind: 'range', name: name, nodes: nodes.join(','), start: String(start), end: String(end), step: String(step) });
  }
  function scalarOf(result) {
    if (!result || !result.length) return null;
    var v = parseFloat(result[0].value[1]);
    return isFinite(v) ? v : null;
  }

  // ---- formatting ------------------------------------------------------------

  function pct(v) { return v == null ? '—' : (v * 100).toFixed(v < 0.1 ? 1 : 0) + ' %'; }
  function num(v, digits) { return v == null ? '—' : v.toFixed(digits); }
  function isoDate(ts) { return new Date(ts * 1000).toISOString().slice(0, 10); }
  function inDays(days) {
    if (days <= 0) return 'now';
    if (days < 365) return 'in ' + Math.round(days) + ' d';
    return 'in ' + (days / 365).toFixed(1) + ' y';
  }
  function cell(tr, text, cls, title) {
    var td = document.createElement('td');
    td.textContent = text;
    if (cls) td.className = cls;
    if (title) td.title = title;
    tr.appendChild(td);
    return td;
  }
  function setState(el, text, kind) {
    el.textContent = text || '';
    el.hidden = !text;
    el.className = 'state' + (kind ? ' ' + kind : '');
  }
  function setStatus(text, kind) {
    var s = $('status');
    s.textContent = text;
    s.className = kind || '';
  }

  // ---- data ------------------------------------------------------------------

  // worstDevice: earliest projected wear-out, else highest wear, else first by name.
  function worstDevice(devs) {
    var names = Object.keys(devs).sort();
    var best = null;
    names.forEach(function (n) {
      var d = devs[n];
      if (best == null) { best = d; return; }
      if (d.wearout != null && (best.wearout == null || d.wearout < best.wearout)) { best = d; return; }
      if (d.wearout == null && best.wearout == null && (d.wear || 0) > (best.wear || 0)) best = d;
    });
    return best;
  }

  function loadSummary() {
    return Promise.all([
      instant('fleet_nodes'),
      instant('fleet_devices'),
      instant('fleet_max_wear'),
      instant('fleet_first_wearout')
    ]).then(function (r) {
      var nodes = scalarOf(r[0]) || 0;
      var wearout = scalarOf(r[3]);
      $('sum-nodes').textContent = String(nodes);
      $('sum-devices').textContent = String(scalarOf(r[1]) || 0);
      $('sum-wear').textContent = pct(scalarOf(r[2]));
      $('sum-wearout').textContent = wearout == null ? 'none projected' : isoDate(wearout);
      return nodes;
    });
  }

  // loadPage: bottomk over the sort key picks the first offset+size nodes (so
  // 1000 nodes cost one small query), then only the page's nodes are detailed.
  function loadPage() {
    var offset = state.page * state.size;
    return instant('node_order', { k: offset + state.size }).then(function (res) {
      var keyed = res.map(function (s) { return { node: s.metric.node, key: parseFloat(s.value[1]) }; })
        .filter(function (k) { return k.node; })
        .sort(function (a, b) { return a.key - b.key || (a.node < b.node ? -1 : a.node > b.node ? 1 : 0); })
        .slice(offset, offset + state.size);
      if (!keyed.length) return [];
      var m = { nodes: keyed.map(function (k) { return k.node; }).join(',') };
      return Promise.all([
        instant('device_info', m),
        instant('device_wear', m),
        instant('device_wearout', m),
        instant('device_dwpd', m),
        instant('device_rated_dwpd', m),
        instant('device_waf', m),
        instant('node_alpha', m)
      ]).then(function (r) {
        var nodes = {};
        keyed.forEach(function (k) { nodes[k.node] = { node: k.node, devices: {}, alpha: null }; });
        function dev(s) {
          var n = nodes[s.metric.node];
          if (!n || !s.metric.device) return null;
          return n.devices[s.metric.device] || (n.devices[s.metric.device] = { device: s.metric.device });
        }
        function put(result, field) {
          result.forEach(function (s) {
            var d = dev(s);
            var v = parseFloat(s.value[1]);
            if (d && isFinite(v)) d[field] = v;
          });
        }
        r[0].forEach(function (s) {
          var d = dev(s);
          if (d) { d.model = s.metric.model || ''; d.tier = s.metric.tier || ''; }
        });
        put(r[1], 'wear');
        put(r[2], 'wearout');
        put(r[3], 'dwpd');
        put(r[4], 'rated');
        put(r[5], 'waf');
        r[6].forEach(function (s) {
          var v = parseFloat(s.value[1]);
          if (nodes[s.metric.node] && isFinite(v)) nodes[s.metric.node].alpha = v;
        });
        return keyed.map(function (k, i) {
          var n = nodes[k.node];
          return { rank: offset + i + 1, node: k.node, alpha: n.alpha, worst: worstDevice(n.devices) };
        });
      });
    });
  }

  // ---- table -----------------------------------------------------------------

  function renderTable(rows) {
    var tbody = $('nodes').tBodies[0];
    tbody.textContent = '';
    var now = Date.now() / 1000;
    rows.forEach(function (r) {
      var tr = document.createElement('tr');
      tr.dataset.node = r.node;
      var w = r.worst || {};
      cell(tr, String(r.rank), 'num');
      cell(tr, r.node, 'node');
      cell(tr, w.device ? w.device + (w.model ? ' · ' + w.model : '') : '—', 'device', w.tier ? 'tier ' + w.tier : 'no devices reported');
      var wear = cell(tr, pct(w.wear), 'num', w.wear == null ? 'not reported' : null);
      if (w.wear != null) wear.classList.add(w.wear >= 0.8 ? 'bad' : w.wear >= 0.5 ? 'warn' : 'ok');
      if (w.wearout != null) {
        var days = (w.wearout - now) / DAY;
        var td = cell(tr, isoDate(w.wearout) + ' (' + inDays(days) + ')', 'date');
        td.classList.add(days < 365 ? 'bad' : days < 3 * 365 ? 'warn' : 'ok');
      } else {
        cell(tr, 'no projection', 'date muted', 'absent: no wear, insufficient data, or beyond 100 years');
      }
      var dwpd = '—';
      var ratioCls = null;
      if (w.dwpd != null) {
        dwpd = num(w.dwpd, 2) + ' / ' + (w.rated != null ? num(w.rated, 2) : '—');
        if (w.rated) {
          var ratio = w.dwpd / w.rated;
          dwpd += ' (' + pct(ratio) + ')';
          ratioCls = ratio >= 1 ? 'bad' : ratio >= 0.8 ? 'warn' : 'ok';
        }
      }
      var dtd = cell(tr, dwpd, 'num', w.dwpd == null ? 'not reported' : null);
      if (ratioCls) dtd.classList.add(ratioCls);
      cell(tr, num(w.waf, 2), 'num', w.waf == null ? 'absent: the drive does not publish media writes' : null);
      cell(tr, pct(r.alpha), 'num', r.alpha == null ? 'not reported' : null);
      tbody.appendChild(tr);
    });
    var pages = Math.max(1, Math.ceil(state.total / state.size));
    $('page-info').textContent = 'page ' + (state.page + 1) + ' of ' + pages + ' · ' + state.total + ' nodes';
    $('prev').disabled = state.page <= 0;
    $('next').disabled = state.page + 1 >= pages;
  }

  // ---- OSDs ------------------------------------------------------------------

  function bytes(v) {
    if (v == null) return '—';
    var units = ['B', 'KiB', 'MiB', 'GiB', 'TiB', 'PiB'];
    var i = 0;
    while (v >= 1024 && i < units.length - 1) { v /= 1024; i++; }
    return (i ? v.toFixed(1) : String(v)) + ' ' + units[i];
  }

  // loadOSDs: bottomk over the key picks the OSD_ROWS soonest, then each metric once for
  // those OSDs; rows are joined by node and ceph_daemon.
  function loadOSDs() {
    return instant('osd_order', { k: OSD_ROWS }).then(function (res) {
      var keyed = res.map(function (s) { return { node: s.metric.node, osd: s.metric.ceph_daemon, key: parseFloat(s.value[1]) }; })
        .filter(function (k) { return k.node && k.osd; })
        .sort(function (a, b) { return a.key - b.key || (a.node + a.osd < b.node + b.osd ? -1 : 1); });
      if (!keyed.length) return [];
      var m = { osds: keyed.map(function (k) { return k.osd; }).join(',') };
      return Promise.all([
        instant('osd_db_used', m),
        instant('osd_db_total', m),
        instant('osd_slow_used', m),
        instant('osd_db_levels', m),
        instant('osd_spill_forecast', m),
        instant('osd_write_share', m),
        instant('osd_invalidation', m)
      ]).then(function (r) {
        var rows = {};
        keyed.forEach(function (k) { rows[k.node + '/' + k.osd] = { node: k.node, osd: k.osd, share: {}, beta: {} }; });
        function each(result, f) {
          result.forEach(function (s) {
            var row = rows[s.metric.node + '/' + s.metric.ceph_daemon];
            var v = parseFloat(s.value[1]);
            if (row && isFinite(v)) f(row, v, s.metric);
          });
        }
        each(r[0], function (row, v) { row.used = v; });
        each(r[1], function (row, v) { row.slot = v; });
        each(r[2], function (row, v) { row.spilled = v; });
        each(r[3], function (row, v) { row.levels = v; });
        each(r[4], function (row, v) { row.forecast = v; });
        each(r[5], function (row, v, lbl) { row.share[lbl['class']] = v; });
        each(r[6], function (row, v, lbl) { row.beta[lbl['class']] = v; });
        return keyed.map(function (k) { return rows[k.node + '/' + k.osd]; });
      });
    });
  }

  function renderOSDs(rows) {
    var tbody = $('osds').tBodies[0];
    tbody.textContent = '';
    var now = Date.now() / 1000;
    rows.forEach(function (o) {
      var tr = document.createElement('tr');
      cell(tr, o.node, 'node');
      cell(tr, o.osd);
      cell(tr, bytes(o.used) + ' / ' + bytes(o.slot), 'num');
      var sp = cell(tr, o.spilled ? bytes(o.spilled) : 'no', 'num');
      if (o.spilled) sp.classList.add('bad');
      cell(tr, o.levels == null ? '—' : o.levels < 0 ? 'not even WAL + L0' : 'WAL, L0–L' + o.levels, null,
        o.levels == null ? 'the OSD\'s RocksDB options could not be read' : null);
      if (o.spilled) {
        cell(tr, 'spilled', 'date bad');
      } else if (o.forecast != null) {
        var days = (o.forecast - now) / DAY;
        var td = cell(tr, isoDate(o.forecast) + ' (' + inDays(days) + ')', 'date');
        td.classList.add(days < 14 ? 'bad' : days < 90 ? 'warn' : 'ok');
      } else {
        cell(tr, 'no forecast', 'date muted', 'not growing, or under 10 minutes of readings');
      }
      cell(tr, pct(o.share.wal) + ' / ' + pct(o.share.sst) + ' / ' + pct(o.share.objects), 'num');
      cell(tr, num(o.beta.wal, 1) + ' / ' + num(o.beta.sst, 1), 'num');
      tbody.appendChild(tr);
    });
    api.osds = rows;
    setState($('osds-state'), rows.length ? '' :
      'No OSD reported: the Prism agents read OSD admin sockets under agent.cephSocketDir (Rook: <dataDirHostPath>/exporter).', 'empty');
  }

  // ---- chart -----------------------------------------------------------------

  function loadChart(rows) {
    var nodes = rows.slice(0, CHART_SERIES).map(function (r) { return r.node; });
    $('chart-scope').textContent = nodes.length ? '· ' + nodes.length + ' soonest-wearing nodes of this page' : '';
    if (!nodes.length) return Promise.resolve(null);
    var end = Math.floor(Date.now() / 1000);
    var step = Math.max(1, Math.ceil(state.range / 300));
    return rangeQuery(state.metric === 'days' ? 'chart_days' : 'chart_wear', nodes, end - state.range, end, step).then(function (res) {
      var byNode = {};
      res.forEach(function (s) { byNode[s.metric.node] = s.values; });
      var order = nodes.filter(function (n) { return byNode[n]; });
      var xsSet = {};
      order.forEach(function (n) { byNode[n].forEach(function (v) { xsSet[v[0]] = true; }); });
      var xs = Object.keys(xsSet).map(Number).sort(function (a, b) { return a - b; });
      var index = {};
      xs.forEach(function (x, i) { index[x] = i; });
      var data = [xs];
      order.forEach(function (n) {
        var ys = new Array(xs.length).fill(null);
        byNode[n].forEach(function (v) {
          var y = parseFloat(v[1]);
          ys[index[v[0]]] = isFinite(y) ? y : null;
        });
        data.push(ys);
      });
      return { nodes: order, data: data };
    });
  }

  function renderChart(c) {
    var el = $('chart');
    if (api.chart) { api.chart.destroy(); api.chart = null; }
    el.textContent = '';
    if (!c || !c.nodes.length || c.data[0].length === 0) {
      setState($('chart-state'), c ? 'No data: these nodes have no ' +
        (state.metric === 'days' ? 'projected wear-out date' : 'wear reading') + ' in the selected range.' : 'No nodes to chart.', 'empty');
      return;
    }
    setState($('chart-state'), '');
    var days = state.metric === 'days';
    var fmt = days ? function (v) { return v == null ? '—' : Math.round(v) + ' d'; }
      : function (v) { return v == null ? '—' : (v * 100).toFixed(1) + ' %'; };
    var sparse = c.data[0].length < 3;
    var series = [{}].concat(c.nodes.map(function (n, i) {
      return {
        label: n,
        stroke: PALETTE[i % PALETTE.length],
        width: 2,
        points: { show: sparse },
        value: function (u, v) { return fmt(v); }
      };
    }));
    var opts = {
      width: Math.max(300, el.clientWidth),
      height: 320,
      series: series,
      scales: { x: { time: true } },
      axes: [
        {},
        { size: 70, values: function (u, vals) { return vals.map(fmt); } }
      ],
      legend: { live: true }
    };
    api.chart = new uPlot(opts, c.data, el);
  }

  window.addEventListener('resize', function () {
    if (api.chart) api.chart.setSize({ width: Math.max(300, $('chart').clientWidth), height: 320 });
  });

  // ---- refresh -----------------------------------------------------------------

  function syncURL() {
    var p = new URLSearchParams();
    if (state.page) p.set('page', String(state.page + 1));
    if (state.size !== 25) p.set('size', String(state.size));
    if (state.range !== 3600) p.set('range', String(state.range));
    if (state.metric !== 'wear') p.set('metric', state.metric);
    var q = p.toString();
    window.history.replaceState(null, '', window.location.pathname + (q ? '?' + q : ''));
  }

  function refresh() {
    var seq = ++state.seq;
    document.body.dataset.state = 'loading';
    setStatus('Loading…', 'busy');
    syncURL();
    return loadSummary().then(function (total) {
      state.total = total;
      var pages = Math.max(1, Math.ceil(total / state.size));
      if (state.page >= pages) state.page = pages - 1;
      if (!total) return [];
      return loadPage();
    }).then(function (rows) {
      if (seq !== state.seq) return null;
      state.rows = api.rows = rows;
      renderTable(rows);
      setState($('table-state'), state.total ? '' :
        'No data: Prometheus has no prism_device_info series. Is the Prism node agent running and scraped (port 9464)?', 'empty');
      return loadChart(rows);
    }).then(function (c) {
      if (seq !== state.seq) return null;
      renderChart(c);
      return loadOSDs();
    }).then(function (osds) {
      if (seq !== state.seq || osds == null) return;
      renderOSDs(osds);
      setStatus('Updated ' + new Date().toLocaleTimeString(), 'ok');
      document.body.dataset.state = state.total ? 'ready' : 'empty';
      api.ready = true;
    }).catch(function (err) {
      if (seq !== state.seq) return;
      api.errors.push(String(err.message || err));
      setStatus('Prometheus query failed', 'error');
      setState($('table-state'), 'Could not query Prometheus: ' + (err.message || err), 'error');
      setState($('chart-state'), 'No chart: the queries failed.', 'error');
      setState($('osds-state'), 'Could not query Prometheus: ' + (err.message || err), 'error');
      document.body.dataset.state = 'error';
      api.ready = true;
    });
  }
  api.refresh = refresh;

  if (!Array.prototype.some.call($('page-size').options, function (o) { return o.value === String(state.size); })) {
    var opt = document.createElement('option');
    opt.textContent = String(state.size);
    $('page-size').appendChild(opt);
  }
  $('page-size').value = String(state.size);
  $('range').value = String(state.range);
  $('metric').value = state.metric;
  $('page-size').addEventListener('change', function (e) { state.size = parseInt(e.target.value, 10); state.page = 0; refresh(); });
  $('prev').addEventListener('click', function () { if (state.page > 0) { state.page--; refresh(); } });
  $('next').addEventListener('click', function () { state.page++; refresh(); });
  $('range').addEventListener('change', function (e) {
    state.range = parseInt(e.target.value, 10);
    loadChart(state.rows).then(renderChart, function (err) { setState($('chart-state'), 'Could not query Prometheus: ' + err.message, 'error'); });
    syncURL();
  });
  $('metric').addEventListener('change', function (e) {
    state.metric = e.target.value;
    loadChart(state.rows).then(renderChart, function (err) { setState($('chart-state'), 'Could not query Prometheus: ' + err.message, 'error'); });
    syncURL();
  });

  refresh();
  window.setInterval(function () { if (!document.hidden) refresh(); }, REFRESH_MS);
})();
