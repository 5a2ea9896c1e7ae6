// The ES module entry of quickrealm/tree: the CommonJS module's objects under named exports.
import tree from './tree.js';

export const { createContext } = tree;
export default tree;
