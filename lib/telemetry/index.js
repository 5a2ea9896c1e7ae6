'use strict';
// OpenTelemetry (DESIGN §9): the public part. The hooks the layers call are in hooks.js.

const { configureTelemetry } = require('./otel.js');

module.exports = { configureTelemetry };
