export { helmBinary } from './helm-binary';
export { type ChartValues, helm, type Manifest, renderChart, valuesArgs } from './helm-chart';
