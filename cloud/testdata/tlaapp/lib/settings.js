// Still running when main.js imports it: main.js waits for it.
const tick = await new Promise((resolve) => setTimeout(() => resolve('after a timer'), 1));
export const settings = { tick, ready: true };
