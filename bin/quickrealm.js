#!/usr/bin/env node
'use strict';
// quickrealm command-line tool: `quickrealm run` and `quickrealm exec`, each reading a JSON
// request on stdin. The commands live in lib/cli/.

require('../lib/cli/index.js').main(process.argv.slice(2));
