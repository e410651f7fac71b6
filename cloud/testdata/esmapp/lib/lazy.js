// Loaded by import() when a function first needs it.
export const lazy = () => ({ lazy: true, at: import.meta.url.startsWith("file:///") && import.meta.url.endsWith("/lib/lazy.js") });
