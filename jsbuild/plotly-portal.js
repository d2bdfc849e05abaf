// The Plotly.js the portal loads: the core (scatter included) and only the trace types the
// figure builders emit (grep '"type": "' in benchmarks/, simulations/, regressions/ and
// bisection/): bar, box, heatmap, scattergl (comparisons with many series) and table.
// A figure with any other type draws nothing; add its module here and rebuild.
"use strict";

var Plotly = require("plotly.js/lib/core");

Plotly.register([
  require("plotly.js/lib/bar"),
  require("plotly.js/lib/box"),
  require("plotly.js/lib/heatmap"),
  require("plotly.js/lib/scattergl"),
  require("plotly.js/lib/table"),
]);

module.exports = Plotly;
