import { assert } from "./assert.js";

assert("".normalize(), "");