// The library entry (ahma-shell imports it for --introspect) and the CLI entry the bin shim
// imports: the configuration every package with a bin shares.
export { default } from '../../tsup.bins.js';
