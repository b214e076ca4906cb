//! Defaults of the config that code without the schema needs too (`mls logs` loads no zod):
//! each figure has its home here, and the schema takes it from here.

/** `poll.window_limits`: the most pages of one fetch of a window, and its longest time (as written in a config). */
export const WINDOW_LIMITS_DEFAULTS = { max_pages: 5_000, max_duration: '10m' } as const;
