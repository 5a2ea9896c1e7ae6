// The ES module entry point: the same objects as the CommonJS entry (one copy of the addon and
// of its process-wide state). Node finds the named exports in index.js's module.exports
// literal (and the tools it spreads in), so nothing is listed twice.
export * from './index.js';
export { default } from './index.js';
