'use strict';
// quickrealm/fleet: sessions on PostgreSQL (the store of record) and turns spread over worker
// processes. Needs the optional peers `pg` (and `pg-boss` for turns). Re-exports only.

const { PostgresStore } = require('./store.js');
const { importSessions } = require('./import.js');
const { MIGRATIONS } = require('./migrations.js');
const { Fleet } = require('./fleet.js');

module.exports = { PostgresStore, importSessions, MIGRATIONS, Fleet };
