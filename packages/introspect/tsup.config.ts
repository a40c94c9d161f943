export { default } from '../../tsup.bins.js';
