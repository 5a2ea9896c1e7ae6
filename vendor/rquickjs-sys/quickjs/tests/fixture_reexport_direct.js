import { doesNotExist } from "./fixture_reexport_source.js"
