'use strict';
// Former path of log-lines.js (guest console lines); `quickrealm/console` is the review console in console/.
module.exports = require('./log-lines.js');
