/** The limits of one config value (JSON text) the agent takes from TrustGraph's config service or a config dump. */

/** Largest config value (JSON text) accepted for one tool, tool service or MCP entry. */
export const MAX_CONFIG_VALUE_CHARS = 1_048_576;
/** Deepest nesting accepted in one config value; real tool values nest 4 or 5 levels. */
export const MAX_CONFIG_VALUE_DEPTH = 64;
/** Most JSON values (objects, arrays, strings, numbers, ...) accepted in one config value. */
export const MAX_CONFIG_VALUE_NODES = 100_000;
