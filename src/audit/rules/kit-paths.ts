// The kit's paths are named in one place, knowledge/kit-paths.ts; the rules import them from here.
export { BOTH_PATCHES, KIT } from '../../knowledge/kit-paths.js';
