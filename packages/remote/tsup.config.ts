export { default } from '../../tsup.libs.js';
