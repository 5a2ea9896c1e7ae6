// The ES module entry of quickrealm/console: the same objects as the CommonJS entry, named
// exports found by Node in index.js's module.exports literal.
export * from './index.js';
export { default } from './index.js';
