export { doesNotExist } from "./fixture_reexport_source.js"
