// An .mjs module: its stack frames must name this file and line.
export function cents(amount) {
  return Math.round(amount * 100);
}

export function broken() {
  const missing = undefined;
  return missing.amount;
}
