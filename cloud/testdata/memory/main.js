// Cloud code for the memory bound's tests (jsmemory_test.go), run with
// cloudCodeMaxMemory 64mb.

// hoard keeps megabyte strings until the watchdog stops it; the 1 GB cap
// only keeps a broken bound from taking the test machine down.
function hoard() {
  const kept = [];
  for (let i = 0; i < 1024; i++) {
    kept.push('x'.repeat(1 << 20));
  }
  return kept.length;
}

Parse.Cloud.define('hog', () => hoard());

// moderate keeps 8 MB for 30 ms, long enough for the watchdog to measure it.
Parse.Cloud.define('moderate', () => {
  const kept = [];
  for (let i = 0; i < 8; i++) {
    kept.push('y'.repeat(1 << 20));
  }
  const until = Date.now() + 30;
  while (Date.now() < until) {}
  return kept.length;
});

// churn allocates 160 MB in all but keeps only one megabyte at a time:
// garbage is not counted.
Parse.Cloud.define('churn', () => {
  let last = '';
  for (let i = 0; i < 160; i++) {
    last = 'z'.repeat(1 << 20);
  }
  return last.length;
});

Parse.Cloud.define('recurse', () => {
  const down = (n) => down(n + 1) + 1;
  return down(0);
});

Parse.Cloud.define('hello', () => 'hello');

Parse.Cloud.beforeSave('Hog', (request) => {
  request.object.set('size', hoard());
});

Parse.Cloud.job('hogJob', () => {
  hoard();
});
