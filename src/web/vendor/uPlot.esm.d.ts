// Types for the type check only: the browser loads /explorer/vendor/uPlot.esm.js, which
// src/http/explorer-routes.ts serves from node_modules/uplot.
import uPlot from 'uplot';
export default uPlot;
