'use strict';
// Stateful components: public states a model edits with scripts, validated and committed all
// together or not at all. The declarations are in index.d.ts.

const { StatefulComponent, ComponentGroup, StateType, Permission, compose } = require('./component.js');

module.exports = { StatefulComponent, ComponentGroup, StateType, Permission, compose };
